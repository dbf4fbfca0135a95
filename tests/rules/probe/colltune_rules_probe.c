/*
 * colltune_rules_probe: a tiny MPI program for the rules integration tests. It calls one
 * collective a few times at each given size, with errors returned instead of aborting, and
 * rank 0 prints "size=<bytes> rc=<MPI error class>" per size. Sizes follow OSU conventions:
 * bytes of MPI_CHAR per rank (per-rank block for gather/scatter/allgather/alltoall), MPI_FLOAT
 * with MPI_SUM for allreduce/reduce (count = bytes / 4).
 *
 * usage: colltune_rules_probe <collective>[,<collective>...] <iterations> <size> [<size>...]
 * Output (rank 0): "coll=<name> size=<bytes> rc=<MPI error class>" per collective and size.
 * After a failed call the remaining sizes of that collective are skipped (peers may be out of
 * step), and the program exits 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run_once(const char *coll, long bytes, char *a, char *b, int size) {
  int count = (int)bytes;
  if (strcmp(coll, "bcast") == 0) return MPI_Bcast(a, count, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (strcmp(coll, "allreduce") == 0)
    return MPI_Allreduce(a, b, count / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  if (strcmp(coll, "reduce") == 0)
    return MPI_Reduce(a, b, count / 4, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (strcmp(coll, "gather") == 0)
    return MPI_Gather(a, count, MPI_CHAR, b, count, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (strcmp(coll, "scatter") == 0)
    return MPI_Scatter(a, count, MPI_CHAR, b, count, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (strcmp(coll, "allgather") == 0)
    return MPI_Allgather(a, count, MPI_CHAR, b, count, MPI_CHAR, MPI_COMM_WORLD);
  if (strcmp(coll, "alltoall") == 0)
    return MPI_Alltoall(a, count, MPI_CHAR, b, count, MPI_CHAR, MPI_COMM_WORLD);
  if (strcmp(coll, "barrier") == 0) return MPI_Barrier(MPI_COMM_WORLD);
  (void)size;
  return -1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 4) {
    if (rank == 0) fprintf(stderr, "usage: %s <collective> <iterations> <size>...\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int iterations = atoi(argv[2]);
  int status = 0;
  char *list = strdup(argv[1]);
  for (char *coll = strtok(list, ","); coll != NULL; coll = strtok(NULL, ",")) {
    for (int i = 3; i < argc; ++i) {
      long bytes = atol(argv[i]);
      size_t buffer = (size_t)(bytes > 0 ? bytes : 1) * (size_t)size;
      char *a = calloc(buffer, 1), *b = calloc(buffer, 1);
      int rc = MPI_SUCCESS;
      for (int it = 0; it < iterations && rc == MPI_SUCCESS; ++it)
        rc = run_once(coll, bytes, a, b, size);
      int error_class = MPI_SUCCESS;
      if (rc == -1) {
        if (rank == 0) fprintf(stderr, "unknown collective %s\n", coll);
        status = 2;
      } else if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &error_class);
        status = 1;
      }
      if (rank == 0) printf("coll=%s size=%ld rc=%d\n", coll, bytes, error_class);
      free(a);
      free(b);
      if (rc != MPI_SUCCESS) break; /* a failed collective leaves peers out of step */
    }
    fflush(stdout);
  }
  free(list);
  MPI_Finalize();
  return status;
}
