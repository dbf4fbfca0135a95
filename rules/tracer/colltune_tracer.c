/*
 * colltune algorithm tracer: an LD_PRELOAD interposer that records which coll/base algorithm
 * functions of Open MPI 4.1.x really ran (docs/reference/open-mpi-rules.md §B.3).
 *
 * mca_coll_tuned.so calls the exported ompi_coll_base_<coll>_intra_<alg> functions of
 * libmpi.so.40 through its PLT, so a preloaded library that defines the same symbols sees
 * every call. Each wrapper counts the call per (function, segsize, fanout, max requests,
 * bytes, datatype size, communicator size, nesting depth) and forwards to the real function
 * (dlsym RTLD_NEXT). At MPI_Finalize (interposed; forwards to PMPI_Finalize) every rank writes
 * its counts to $COLLTUNE_TRACE_DIR/trace.<pid>.<rank>, or to stderr when the variable is unset.
 *
 * Output, one line per distinct key (parsed by rules/trace.h):
 *   # colltune-trace 1 rank=0 world_size=4 pid=1234
 *   fn=bcast_intra_binomial rank=0 comm_size=4 bytes=1048576 dtsize=1 segsize=1024 fanout=-
 *       maxreq=- depth=0 calls=120
 * "bytes" is the per-rank message size the application passed (type size x count; for
 * gather/scatter/allgather/alltoall the per-rank block, i.e. the OSU size; the tuned rules
 * key is bytes x comm_size for those). "-" marks an argument the function does not take.
 * depth 0 = called by the coll framework; depth > 0 = called from inside another traced
 * algorithm (e.g. allreduce nonoverlapping -> reduce + bcast).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOT_APPLICABLE INT64_MIN
#define MAX_RECORDS 8192

typedef struct {
  const char *function; /* without the "ompi_coll_base_" prefix; static storage */
  int64_t segsize, fanout, max_requests, bytes;
  int dtsize, comm_size, depth;
  int64_t calls;
} record_t;

static record_t records[MAX_RECORDS];
static int record_count = 0;
static int records_dropped = 0;
static int trace_written = 0;
static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int call_depth = 0;

/* Local queries are only legal between MPI_Init and MPI_Finalize. */
static int mpi_usable(void) {
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  return initialized && !finalized;
}

static int type_size(MPI_Datatype type) {
  int size = 0;
  if (type == NULL || type == MPI_DATATYPE_NULL || !mpi_usable()) return 0;
  if (PMPI_Type_size(type, &size) != MPI_SUCCESS) return 0;
  return size;
}

static int comm_size(MPI_Comm comm) {
  int size = -1;
  if (comm == NULL || comm == MPI_COMM_NULL || !mpi_usable()) return -1;
  if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS) return -1;
  return size;
}

static void record(const char *function, MPI_Comm comm, int64_t bytes, int dtsize, int64_t segsize,
                   int64_t fanout, int64_t max_requests) {
  int size = comm_size(comm);
  pthread_mutex_lock(&records_lock);
  for (int i = record_count - 1; i >= 0; --i) {
    record_t *r = &records[i];
    if (r->function == function && r->bytes == bytes && r->dtsize == dtsize &&
        r->segsize == segsize && r->fanout == fanout && r->max_requests == max_requests &&
        r->comm_size == size && r->depth == call_depth) {
      r->calls++;
      pthread_mutex_unlock(&records_lock);
      return;
    }
  }
  if (record_count < MAX_RECORDS) {
    record_t *r = &records[record_count++];
    r->function = function;
    r->bytes = bytes;
    r->dtsize = dtsize;
    r->segsize = segsize;
    r->fanout = fanout;
    r->max_requests = max_requests;
    r->comm_size = size;
    r->depth = call_depth;
    r->calls = 1;
  } else {
    records_dropped++;
  }
  pthread_mutex_unlock(&records_lock);
}

static void *resolve(const char *symbol) {
  void *fn = dlsym(RTLD_NEXT, symbol);
  if (fn == NULL) {
    fprintf(stderr, "colltune tracer: cannot resolve %s: %s\n", symbol, dlerror());
    abort();
  }
  return fn;
}

static void print_value(FILE *out, const char *key, int64_t value) {
  if (value == NOT_APPLICABLE)
    fprintf(out, " %s=-", key);
  else
    fprintf(out, " %s=%lld", key, (long long)value);
}

static void write_trace(int rank, int world_size) {
  pthread_mutex_lock(&records_lock);
  if (trace_written) {
    pthread_mutex_unlock(&records_lock);
    return;
  }
  trace_written = 1;
  FILE *out = stderr;
  char path[4096];
  char tmp_path[4200];
  const char *dir = getenv("COLLTUNE_TRACE_DIR");
  if (dir != NULL && dir[0] != '\0') {
    snprintf(path, sizeof path, "%s/trace.%ld.%d", dir, (long)getpid(), rank);
    snprintf(tmp_path, sizeof tmp_path, "%s.tmp", path);
    out = fopen(tmp_path, "w");
    if (out == NULL) {
      fprintf(stderr, "colltune tracer: cannot write %s: %s\n", tmp_path, strerror(errno));
      out = stderr;
      dir = NULL;
    }
  } else {
    dir = NULL;
  }
  /* To stderr, every rank's trace leaves in one write(2): the ranks share mpirun's stderr, and a
     line written in pieces could interleave with another rank's. */
  char *text = NULL;
  size_t text_size = 0;
  FILE *mem = dir == NULL ? open_memstream(&text, &text_size) : NULL;
  if (mem != NULL) out = mem;
  fprintf(out, "# colltune-trace 1 rank=%d world_size=%d pid=%ld dropped=%d\n", rank, world_size,
          (long)getpid(), records_dropped);
  for (int i = 0; i < record_count; ++i) {
    const record_t *r = &records[i];
    fprintf(out, "fn=%s rank=%d comm_size=%d bytes=%lld dtsize=%d", r->function, rank, r->comm_size,
            (long long)r->bytes, r->dtsize);
    print_value(out, "segsize", r->segsize);
    print_value(out, "fanout", r->fanout);
    print_value(out, "maxreq", r->max_requests);
    fprintf(out, " depth=%d calls=%lld\n", r->depth, (long long)r->calls);
  }
  if (dir != NULL) {
    /* Readers list the directory: publish the file complete or not at all. */
    if (fclose(out) == 0) rename(tmp_path, path);
  } else if (mem != NULL) {
    if (fclose(mem) == 0) {
      size_t done = 0;
      while (done < text_size) {
        ssize_t n = write(STDERR_FILENO, text + done, text_size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += (size_t)n;
      }
    }
    free(text);
  } else {
    fflush(out);
  }
  pthread_mutex_unlock(&records_lock);
}

int MPI_Finalize(void) {
  int rank = -1, world_size = -1;
  if (mpi_usable()) {
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  }
  write_trace(rank, world_size);
  return PMPI_Finalize();
}

/* A rank that aborts or exits without MPI_Finalize still reports what it saw. */
__attribute__((destructor)) static void write_trace_at_exit(void) {
  if (trace_written || record_count == 0) return;
  const char *rank_text = getenv("OMPI_COMM_WORLD_RANK");
  const char *size_text = getenv("OMPI_COMM_WORLD_SIZE");
  write_trace(rank_text ? atoi(rank_text) : -1, size_text ? atoi(size_text) : -1);
}

/* ---- Wrappers. Signatures from ompi/mca/coll/base/coll_base_functions.h (4.1.x). ---- */

typedef void *module_t;
#define NA NOT_APPLICABLE

/* Forwards to the real symbol, counting one call at the current nesting depth. */
/* (dlsym returns an object pointer; POSIX's idiom turns it into a function pointer.) */
#define FORWARD(name, fn_type, ...)                                       \
  static fn_type real = NULL;                                             \
  if (real == NULL) *(void **)(&real) = resolve("ompi_coll_base_" #name); \
  ++call_depth;                                                           \
  int rc = real(__VA_ARGS__);                                             \
  --call_depth;                                                           \
  return rc

static int64_t block_bytes(const void *buf, int count, MPI_Datatype type, int fallback_count,
                           MPI_Datatype fallback_type, int *dtsize) {
  /* MPI_IN_PLACE (or no send type): the receive block has the same size. */
  if (buf == MPI_IN_PLACE || type == NULL || type == MPI_DATATYPE_NULL) {
    count = fallback_count;
    type = fallback_type;
  }
  *dtsize = type_size(type);
  return (int64_t)count * *dtsize;
}

/* allgather / alltoall: per-rank (per-peer) block. */
#define ALLGATHER_PARAMS                                                                          \
  const void *sbuf, int scount, MPI_Datatype sdtype, void *rbuf, int rcount, MPI_Datatype rdtype, \
      MPI_Comm comm, module_t module
#define ALLGATHER_NAMES sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, module
typedef int (*allgather_fn)(ALLGATHER_PARAMS);
typedef int (*alltoall_mr_fn)(ALLGATHER_PARAMS, int);

#define WRAP_ALLGATHER(name)                                                    \
  int ompi_coll_base_##name(ALLGATHER_PARAMS) {                                 \
    int dtsize;                                                                 \
    int64_t bytes = block_bytes(sbuf, scount, sdtype, rcount, rdtype, &dtsize); \
    record(#name, comm, bytes, dtsize, NA, NA, NA);                             \
    FORWARD(name, allgather_fn, ALLGATHER_NAMES);                               \
  }
WRAP_ALLGATHER(allgather_intra_basic_linear)
WRAP_ALLGATHER(allgather_intra_bruck)
WRAP_ALLGATHER(allgather_intra_recursivedoubling)
WRAP_ALLGATHER(allgather_intra_ring)
WRAP_ALLGATHER(allgather_intra_neighborexchange)
WRAP_ALLGATHER(allgather_intra_two_procs)
WRAP_ALLGATHER(alltoall_intra_basic_linear)
WRAP_ALLGATHER(alltoall_intra_pairwise)
WRAP_ALLGATHER(alltoall_intra_bruck)
WRAP_ALLGATHER(alltoall_intra_two_procs)

int ompi_coll_base_alltoall_intra_linear_sync(ALLGATHER_PARAMS, int max_requests) {
  int dtsize;
  int64_t bytes = block_bytes(sbuf, scount, sdtype, rcount, rdtype, &dtsize);
  record("alltoall_intra_linear_sync", comm, bytes, dtsize, NA, NA, max_requests);
  FORWARD(alltoall_intra_linear_sync, alltoall_mr_fn, ALLGATHER_NAMES, max_requests);
}

/* allgatherv: bytes = own send block. */
#define ALLGATHERV_PARAMS                                                            \
  const void *sbuf, int scount, MPI_Datatype sdtype, void *rbuf, const int *rcounts, \
      const int *rdispls, MPI_Datatype rdtype, MPI_Comm comm, module_t module
#define ALLGATHERV_NAMES sbuf, scount, sdtype, rbuf, rcounts, rdispls, rdtype, comm, module
typedef int (*allgatherv_fn)(ALLGATHERV_PARAMS);
#define WRAP_ALLGATHERV(name)                                              \
  int ompi_coll_base_##name(ALLGATHERV_PARAMS) {                           \
    int dtsize;                                                            \
    int64_t bytes = block_bytes(sbuf, scount, sdtype, 0, rdtype, &dtsize); \
    record(#name, comm, bytes, dtsize, NA, NA, NA);                        \
    FORWARD(name, allgatherv_fn, ALLGATHERV_NAMES);                        \
  }
WRAP_ALLGATHERV(allgatherv_intra_basic_default)
WRAP_ALLGATHERV(allgatherv_intra_bruck)
WRAP_ALLGATHERV(allgatherv_intra_ring)
WRAP_ALLGATHERV(allgatherv_intra_neighborexchange)
WRAP_ALLGATHERV(allgatherv_intra_two_procs)

/* allreduce / exscan / scan / reduce_scatter_block: count x type. */
#define ALLREDUCE_PARAMS                                                                 \
  const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm, \
      module_t module
#define ALLREDUCE_NAMES sbuf, rbuf, count, dtype, op, comm, module
typedef int (*allreduce_fn)(ALLREDUCE_PARAMS);
typedef int (*allreduce_seg_fn)(ALLREDUCE_PARAMS, uint32_t);
#define WRAP_ALLREDUCE(name)                                         \
  int ompi_coll_base_##name(ALLREDUCE_PARAMS) {                      \
    int dtsize = type_size(dtype);                                   \
    record(#name, comm, (int64_t)count *dtsize, dtsize, NA, NA, NA); \
    FORWARD(name, allreduce_fn, ALLREDUCE_NAMES);                    \
  }
WRAP_ALLREDUCE(allreduce_intra_basic_linear)
WRAP_ALLREDUCE(allreduce_intra_nonoverlapping)
WRAP_ALLREDUCE(allreduce_intra_recursivedoubling)
WRAP_ALLREDUCE(allreduce_intra_ring)
WRAP_ALLREDUCE(allreduce_intra_redscat_allgather)
WRAP_ALLREDUCE(exscan_intra_linear)
WRAP_ALLREDUCE(exscan_intra_recursivedoubling)
WRAP_ALLREDUCE(scan_intra_linear)
WRAP_ALLREDUCE(scan_intra_recursivedoubling)
WRAP_ALLREDUCE(reduce_scatter_block_basic_linear)
WRAP_ALLREDUCE(reduce_scatter_block_intra_recursivedoubling)
WRAP_ALLREDUCE(reduce_scatter_block_intra_recursivehalving)
WRAP_ALLREDUCE(reduce_scatter_block_intra_butterfly)

int ompi_coll_base_allreduce_intra_ring_segmented(ALLREDUCE_PARAMS, uint32_t segsize) {
  int dtsize = type_size(dtype);
  record("allreduce_intra_ring_segmented", comm, (int64_t)count * dtsize, dtsize, segsize, NA, NA);
  FORWARD(allreduce_intra_ring_segmented, allreduce_seg_fn, ALLREDUCE_NAMES, segsize);
}

/* alltoallv: bytes = average per-peer send block. */
#define ALLTOALLV_PARAMS                                                                     \
  const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype sdtype, void *rbuf, \
      const int *rcounts, const int *rdispls, MPI_Datatype rdtype, MPI_Comm comm, module_t module
#define ALLTOALLV_NAMES sbuf, scounts, sdispls, sdtype, rbuf, rcounts, rdispls, rdtype, comm, module
typedef int (*alltoallv_fn)(ALLTOALLV_PARAMS);
#define WRAP_ALLTOALLV(name)                                                       \
  int ompi_coll_base_##name(ALLTOALLV_PARAMS) {                                    \
    int size = comm_size(comm);                                                    \
    const int *counts = sbuf == MPI_IN_PLACE ? rcounts : scounts;                  \
    MPI_Datatype type = sbuf == MPI_IN_PLACE ? rdtype : sdtype;                    \
    int dtsize = type_size(type);                                                  \
    int64_t total = 0;                                                             \
    for (int i = 0; counts != NULL && i < size; ++i) total += counts[i];           \
    record(#name, comm, size > 0 ? total * dtsize / size : 0, dtsize, NA, NA, NA); \
    FORWARD(name, alltoallv_fn, ALLTOALLV_NAMES);                                  \
  }
WRAP_ALLTOALLV(alltoallv_intra_basic_linear)
WRAP_ALLTOALLV(alltoallv_intra_pairwise)

/* barrier */
typedef int (*barrier_fn)(MPI_Comm, module_t);
#define WRAP_BARRIER(name)                                    \
  int ompi_coll_base_##name(MPI_Comm comm, module_t module) { \
    record(#name, comm, 0, 0, NA, NA, NA);                    \
    FORWARD(name, barrier_fn, comm, module);                  \
  }
WRAP_BARRIER(barrier_intra_basic_linear)
WRAP_BARRIER(barrier_intra_doublering)
WRAP_BARRIER(barrier_intra_recursivedoubling)
WRAP_BARRIER(barrier_intra_bruck)
WRAP_BARRIER(barrier_intra_two_procs)
WRAP_BARRIER(barrier_intra_tree)

/* bcast */
#define BCAST_PARAMS \
  void *buf, int count, MPI_Datatype dtype, int root, MPI_Comm comm, module_t module
#define BCAST_NAMES buf, count, dtype, root, comm, module
typedef int (*bcast_fn)(BCAST_PARAMS);
typedef int (*bcast_seg_fn)(BCAST_PARAMS, uint32_t);
typedef int (*bcast_seg_fan_fn)(BCAST_PARAMS, uint32_t, int32_t);

int ompi_coll_base_bcast_intra_basic_linear(BCAST_PARAMS) {
  int dtsize = type_size(dtype);
  record("bcast_intra_basic_linear", comm, (int64_t)count * dtsize, dtsize, NA, NA, NA);
  FORWARD(bcast_intra_basic_linear, bcast_fn, BCAST_NAMES);
}
#define WRAP_BCAST_SEG(name)                                              \
  int ompi_coll_base_##name(BCAST_PARAMS, uint32_t segsize) {             \
    int dtsize = type_size(dtype);                                        \
    record(#name, comm, (int64_t)count *dtsize, dtsize, segsize, NA, NA); \
    FORWARD(name, bcast_seg_fn, BCAST_NAMES, segsize);                    \
  }
WRAP_BCAST_SEG(bcast_intra_pipeline)
WRAP_BCAST_SEG(bcast_intra_binomial)
WRAP_BCAST_SEG(bcast_intra_bintree)
WRAP_BCAST_SEG(bcast_intra_split_bintree)
WRAP_BCAST_SEG(bcast_intra_scatter_allgather)
WRAP_BCAST_SEG(bcast_intra_scatter_allgather_ring)
/* chain: fanout = number of chains; knomial: fanout = radix. */
#define WRAP_BCAST_SEG_FAN(name)                                              \
  int ompi_coll_base_##name(BCAST_PARAMS, uint32_t segsize, int32_t fanout) { \
    int dtsize = type_size(dtype);                                            \
    record(#name, comm, (int64_t)count *dtsize, dtsize, segsize, fanout, NA); \
    FORWARD(name, bcast_seg_fan_fn, BCAST_NAMES, segsize, fanout);            \
  }
WRAP_BCAST_SEG_FAN(bcast_intra_chain)
WRAP_BCAST_SEG_FAN(bcast_intra_knomial)

/* gather / scatter: per-rank block as the tuned key uses it (send side on every rank). */
#define GATHER_PARAMS                                                                             \
  const void *sbuf, int scount, MPI_Datatype sdtype, void *rbuf, int rcount, MPI_Datatype rdtype, \
      int root, MPI_Comm comm, module_t module
#define GATHER_NAMES sbuf, scount, sdtype, rbuf, rcount, rdtype, root, comm, module
typedef int (*gather_fn)(GATHER_PARAMS);
typedef int (*gather_int_fn)(GATHER_PARAMS, int);
#define WRAP_GATHER(name)                                                       \
  int ompi_coll_base_##name(GATHER_PARAMS) {                                    \
    int dtsize;                                                                 \
    int64_t bytes = block_bytes(sbuf, scount, sdtype, rcount, rdtype, &dtsize); \
    record(#name, comm, bytes, dtsize, NA, NA, NA);                             \
    FORWARD(name, gather_fn, GATHER_NAMES);                                     \
  }
WRAP_GATHER(gather_intra_basic_linear)
WRAP_GATHER(gather_intra_binomial)
WRAP_GATHER(scatter_intra_basic_linear)
WRAP_GATHER(scatter_intra_binomial)

int ompi_coll_base_gather_intra_linear_sync(GATHER_PARAMS, int first_segment_size) {
  int dtsize;
  int64_t bytes = block_bytes(sbuf, scount, sdtype, rcount, rdtype, &dtsize);
  record("gather_intra_linear_sync", comm, bytes, dtsize, first_segment_size, NA, NA);
  FORWARD(gather_intra_linear_sync, gather_int_fn, GATHER_NAMES, first_segment_size);
}
int ompi_coll_base_scatter_intra_linear_nb(GATHER_PARAMS, int max_reqs) {
  int dtsize;
  int64_t bytes = block_bytes(sbuf, scount, sdtype, rcount, rdtype, &dtsize);
  record("scatter_intra_linear_nb", comm, bytes, dtsize, NA, NA, max_reqs);
  FORWARD(scatter_intra_linear_nb, gather_int_fn, GATHER_NAMES, max_reqs);
}

/* reduce */
#define REDUCE_PARAMS                                                                              \
  const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, int root, MPI_Comm comm, \
      module_t module
#define REDUCE_NAMES sbuf, rbuf, count, dtype, op, root, comm, module
typedef int (*reduce_fn)(REDUCE_PARAMS);
typedef int (*reduce_seg_fn)(REDUCE_PARAMS, uint32_t, int);
typedef int (*reduce_chain_fn)(REDUCE_PARAMS, uint32_t, int, int);
#define WRAP_REDUCE(name)                                            \
  int ompi_coll_base_##name(REDUCE_PARAMS) {                         \
    int dtsize = type_size(dtype);                                   \
    record(#name, comm, (int64_t)count *dtsize, dtsize, NA, NA, NA); \
    FORWARD(name, reduce_fn, REDUCE_NAMES);                          \
  }
WRAP_REDUCE(reduce_intra_basic_linear)
WRAP_REDUCE(reduce_intra_redscat_gather)
#define WRAP_REDUCE_SEG(name)                                                       \
  int ompi_coll_base_##name(REDUCE_PARAMS, uint32_t segsize, int max_requests) {    \
    int dtsize = type_size(dtype);                                                  \
    record(#name, comm, (int64_t)count *dtsize, dtsize, segsize, NA, max_requests); \
    FORWARD(name, reduce_seg_fn, REDUCE_NAMES, segsize, max_requests);              \
  }
WRAP_REDUCE_SEG(reduce_intra_pipeline)
WRAP_REDUCE_SEG(reduce_intra_binary)
WRAP_REDUCE_SEG(reduce_intra_binomial)
WRAP_REDUCE_SEG(reduce_intra_in_order_binary)

int ompi_coll_base_reduce_intra_chain(REDUCE_PARAMS, uint32_t segsize, int fanout,
                                      int max_requests) {
  int dtsize = type_size(dtype);
  record("reduce_intra_chain", comm, (int64_t)count * dtsize, dtsize, segsize, fanout,
         max_requests);
  FORWARD(reduce_intra_chain, reduce_chain_fn, REDUCE_NAMES, segsize, fanout, max_requests);
}

/* reduce_scatter: bytes = sum of receive counts x type (the tuned key). */
#define REDUCE_SCATTER_PARAMS                                                                     \
  const void *sbuf, void *rbuf, const int *rcounts, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm, \
      module_t module
#define REDUCE_SCATTER_NAMES sbuf, rbuf, rcounts, dtype, op, comm, module
typedef int (*reduce_scatter_fn)(REDUCE_SCATTER_PARAMS);
#define WRAP_REDUCE_SCATTER(name)                                          \
  int ompi_coll_base_##name(REDUCE_SCATTER_PARAMS) {                       \
    int size = comm_size(comm);                                            \
    int dtsize = type_size(dtype);                                         \
    int64_t total = 0;                                                     \
    for (int i = 0; rcounts != NULL && i < size; ++i) total += rcounts[i]; \
    record(#name, comm, total *dtsize, dtsize, NA, NA, NA);                \
    FORWARD(name, reduce_scatter_fn, REDUCE_SCATTER_NAMES);                \
  }
WRAP_REDUCE_SCATTER(reduce_scatter_intra_nonoverlapping)
WRAP_REDUCE_SCATTER(reduce_scatter_intra_basic_recursivehalving)
WRAP_REDUCE_SCATTER(reduce_scatter_intra_ring)
WRAP_REDUCE_SCATTER(reduce_scatter_intra_butterfly)
