#include "osu/bench/workload.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <numeric>
#include <vector>

namespace colltune::osu_bench {
namespace {

// Page-aligned buffer (OMB's allocate_memory_coll uses posix_memalign with the page size).
class Buffer {
 public:
  Buffer() = default;
  Buffer(std::size_t bytes, int fill) : bytes_(bytes) {
    void* memory = nullptr;
    const auto alignment = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    if (::posix_memalign(&memory, alignment, bytes == 0 ? 1 : bytes) != 0) throw std::bad_alloc();
    data_.reset(static_cast<unsigned char*>(memory));
    std::memset(data_.get(), fill, bytes);  // OMB's set_buffer
  }
  unsigned char* data() const { return data_.get(); }
  std::size_t size() const { return bytes_; }

 private:
  struct Free {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  std::unique_ptr<unsigned char, Free> data_;
  std::size_t bytes_ = 0;
};

MPI_Datatype mpi_datatype(ElementType t) {
  switch (t) {
    case ElementType::mpi_char:
      return MPI_CHAR;
    case ElementType::mpi_int:
      return MPI_INT;
    case ElementType::mpi_float:
      return MPI_FLOAT;
  }
  return MPI_CHAR;
}

// Validation data for collectives that move bytes: byte `index` of the block `source` sends to
// `destination`. Never constant across ranks or positions, so a misplaced block is caught.
unsigned char moved_byte(int source, int destination, std::int64_t index) {
  return static_cast<unsigned char>((source * 29 + destination * 13 + index * 7 + 1) % 251);
}

// Validation data for reductions: element `index` of `rank`'s input, in {0, 1, 2}, so MPI_SUM
// is exact in every element type (MPI_CHAR up to 63 ranks).
int reduced_input(int rank, std::int64_t index) { return static_cast<int>((rank + index) % 3); }

int reduced_sum(int comm_size, std::int64_t index) {
  int sum = 0;
  for (int rank = 0; rank < comm_size; ++rank) sum += reduced_input(rank, index);
  return sum;
}

void store_element(ElementType t, unsigned char* base, std::int64_t index, int value) {
  switch (t) {
    case ElementType::mpi_char:
      base[index] = static_cast<unsigned char>(static_cast<signed char>(value));
      return;
    case ElementType::mpi_int: {
      const int v = value;
      std::memcpy(base + index * sizeof v, &v, sizeof v);
      return;
    }
    case ElementType::mpi_float: {
      const float v = static_cast<float>(value);
      std::memcpy(base + index * sizeof v, &v, sizeof v);
      return;
    }
  }
}

bool element_equals(ElementType t, const unsigned char* base, std::int64_t index, int value) {
  switch (t) {
    case ElementType::mpi_char:
      return static_cast<signed char>(base[index]) == static_cast<signed char>(value);
    case ElementType::mpi_int: {
      int v = 0;
      std::memcpy(&v, base + index * sizeof v, sizeof v);
      return v == value;
    }
    case ElementType::mpi_float: {
      float v = 0;
      std::memcpy(&v, base + index * sizeof v, sizeof v);
      return v == static_cast<float>(value);
    }
  }
  return false;
}

// What every workload knows: communicator, element type and the current count.
class WorkloadBase : public Workload {
 public:
  WorkloadBase(const BenchOptions& options, MPI_Comm comm)
      : comm_(comm), type_(effective_type(options)), datatype_(mpi_datatype(type_)) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &size_);
  }
  void set_count(std::int64_t count) override { count_ = static_cast<int>(count); }

 protected:
  std::size_t bytes_per_rank() const { return static_cast<std::size_t>(count_) * type_size(type_); }
  static std::size_t bytes_for(std::int64_t count, ElementType t) {
    return static_cast<std::size_t>(count) * static_cast<std::size_t>(type_size(t));
  }
  // True when `recv` holds, one block of bytes_per_rank() per source rank in rank order, what
  // each source sent to `destination` (moved_byte).
  bool holds_every_sources_block(const unsigned char* recv, int destination) const {
    const std::size_t block = bytes_per_rank();
    for (int source = 0; source < size_; ++source)
      for (std::size_t i = 0; i < block; ++i)
        if (recv[source * block + i] != moved_byte(source, destination, i)) return false;
    return true;
  }

  MPI_Comm comm_;
  ElementType type_;
  MPI_Datatype datatype_;
  int rank_ = 0;
  int size_ = 1;
  int count_ = 0;
};

class BcastWorkload final : public WorkloadBase {
 public:
  BcastWorkload(const BenchOptions& options, MPI_Comm comm, std::int64_t max_count)
      : WorkloadBase(options, comm), buffer_(bytes_for(max_count, type_), 1) {}
  void run() override { MPI_Bcast(buffer_.data(), count_, datatype_, 0, comm_); }
  void fill_for_validation() override {
    for (std::size_t i = 0; i < bytes_per_rank(); ++i)
      buffer_.data()[i] = rank_ == 0 ? moved_byte(0, 0, i) : moved_byte(0, 0, i) ^ 0x5a;
  }
  bool check_validation() const override {
    for (std::size_t i = 0; i < bytes_per_rank(); ++i)
      if (buffer_.data()[i] != moved_byte(0, 0, i)) return false;
    return true;
  }

 private:
  Buffer buffer_;
};

class GatherWorkload final : public WorkloadBase {
 public:
  GatherWorkload(const BenchOptions& options, MPI_Comm comm, std::int64_t max_count)
      : WorkloadBase(options, comm),
        send_(bytes_for(max_count, type_), 0),
        recv_(rank_ == 0 ? bytes_for(max_count, type_) * size_ : 0, 1) {}
  void run() override {
    MPI_Gather(send_.data(), count_, datatype_, recv_.data(), count_, datatype_, 0, comm_);
  }
  void fill_for_validation() override {
    for (std::size_t i = 0; i < bytes_per_rank(); ++i) send_.data()[i] = moved_byte(rank_, 0, i);
    std::memset(recv_.data(), 0, recv_.size());
  }
  bool check_validation() const override {
    return rank_ != 0 || holds_every_sources_block(recv_.data(), 0);
  }

 private:
  Buffer send_;
  Buffer recv_;
};

class ScatterWorkload final : public WorkloadBase {
 public:
  ScatterWorkload(const BenchOptions& options, MPI_Comm comm, std::int64_t max_count)
      : WorkloadBase(options, comm),
        send_(rank_ == 0 ? bytes_for(max_count, type_) * size_ : 0, 1),
        recv_(bytes_for(max_count, type_), 0) {}
  void run() override {
    MPI_Scatter(send_.data(), count_, datatype_, recv_.data(), count_, datatype_, 0, comm_);
  }
  void fill_for_validation() override {
    const std::size_t block = bytes_per_rank();
    if (rank_ == 0)
      for (int destination = 0; destination < size_; ++destination)
        for (std::size_t i = 0; i < block; ++i)
          send_.data()[destination * block + i] = moved_byte(0, destination, i);
    for (std::size_t i = 0; i < block; ++i) recv_.data()[i] = moved_byte(0, rank_, i) ^ 0x5a;
  }
  bool check_validation() const override {
    for (std::size_t i = 0; i < bytes_per_rank(); ++i)
      if (recv_.data()[i] != moved_byte(0, rank_, i)) return false;
    return true;
  }

 private:
  Buffer send_;
  Buffer recv_;
};

class AllgatherWorkload final : public WorkloadBase {
 public:
  AllgatherWorkload(const BenchOptions& options, MPI_Comm comm, std::int64_t max_count)
      : WorkloadBase(options, comm),
        send_(bytes_for(max_count, type_), 1),
        recv_(bytes_for(max_count, type_) * size_, 0) {}
  void run() override {
    MPI_Allgather(send_.data(), count_, datatype_, recv_.data(), count_, datatype_, comm_);
  }
  void fill_for_validation() override {
    for (std::size_t i = 0; i < bytes_per_rank(); ++i) send_.data()[i] = moved_byte(rank_, 0, i);
    std::memset(recv_.data(), 0, recv_.size());
  }
  bool check_validation() const override { return holds_every_sources_block(recv_.data(), 0); }

 private:
  Buffer send_;
  Buffer recv_;
};

class AlltoallWorkload final : public WorkloadBase {
 public:
  AlltoallWorkload(const BenchOptions& options, MPI_Comm comm, std::int64_t max_count)
      : WorkloadBase(options, comm),
        send_(bytes_for(max_count, type_) * size_, 1),
        recv_(bytes_for(max_count, type_) * size_, 0) {}
  void run() override {
    MPI_Alltoall(send_.data(), count_, datatype_, recv_.data(), count_, datatype_, comm_);
  }
  void fill_for_validation() override {
    const std::size_t block = bytes_per_rank();
    for (int destination = 0; destination < size_; ++destination)
      for (std::size_t i = 0; i < block; ++i)
        send_.data()[destination * block + i] = moved_byte(rank_, destination, i);
    std::memset(recv_.data(), 0, recv_.size());
  }
  bool check_validation() const override { return holds_every_sources_block(recv_.data(), rank_); }

 private:
  Buffer send_;
  Buffer recv_;
};

// reduce (root 0) and allreduce.
class ReduceWorkload final : public WorkloadBase {
 public:
  ReduceWorkload(const BenchOptions& options, MPI_Comm comm, std::int64_t max_count, bool all)
      : WorkloadBase(options, comm),
        all_(all),
        send_(bytes_for(max_count, type_), 1),
        recv_(bytes_for(max_count, type_), 0) {}
  void run() override {
    if (all_) {
      MPI_Allreduce(send_.data(), recv_.data(), count_, datatype_, MPI_SUM, comm_);
    } else {
      MPI_Reduce(send_.data(), recv_.data(), count_, datatype_, MPI_SUM, 0, comm_);
    }
  }
  void fill_for_validation() override {
    for (int i = 0; i < count_; ++i) {
      store_element(type_, send_.data(), i, reduced_input(rank_, i));
      store_element(type_, recv_.data(), i, -1);
    }
  }
  bool check_validation() const override {
    if (!all_ && rank_ != 0) return true;
    for (int i = 0; i < count_; ++i)
      if (!element_equals(type_, recv_.data(), i, reduced_sum(size_, i))) return false;
    return true;
  }

 private:
  bool all_;
  Buffer send_;
  Buffer recv_;
};

class ReduceScatterWorkload final : public WorkloadBase {
 public:
  ReduceScatterWorkload(const BenchOptions& options, MPI_Comm comm, std::int64_t max_count)
      : WorkloadBase(options, comm),
        send_(bytes_for(max_count, type_), 1),
        recv_(bytes_for(max_count / size_ + 1, type_), 0),
        recvcounts_(static_cast<std::size_t>(size_), 0) {}
  void set_count(std::int64_t count) override {
    WorkloadBase::set_count(count);
    recvcounts_ = reduce_scatter_counts(count_, size_);
  }
  void run() override {
    MPI_Reduce_scatter(send_.data(), recv_.data(), recvcounts_.data(), datatype_, MPI_SUM, comm_);
  }
  void fill_for_validation() override {
    for (int i = 0; i < count_; ++i) store_element(type_, send_.data(), i, reduced_input(rank_, i));
    const int mine = recvcounts_[static_cast<std::size_t>(rank_)];
    for (int j = 0; j < mine; ++j) store_element(type_, recv_.data(), j, -1);
  }
  bool check_validation() const override {
    const int offset = std::accumulate(recvcounts_.begin(), recvcounts_.begin() + rank_, 0);
    const int mine = recvcounts_[static_cast<std::size_t>(rank_)];
    for (int j = 0; j < mine; ++j)
      if (!element_equals(type_, recv_.data(), j, reduced_sum(size_, offset + j))) return false;
    return true;
  }

 private:
  Buffer send_;
  Buffer recv_;
  std::vector<int> recvcounts_;
};

class BarrierWorkload final : public WorkloadBase {
 public:
  using WorkloadBase::WorkloadBase;
  void run() override { MPI_Barrier(comm_); }
  void fill_for_validation() override {}
  bool check_validation() const override { return true; }
};

}  // namespace

std::unique_ptr<Workload> make_workload(const BenchOptions& options, MPI_Comm comm,
                                        std::int64_t max_count) {
  switch (options.collective) {
    case Collective::bcast:
      return std::make_unique<BcastWorkload>(options, comm, max_count);
    case Collective::gather:
      return std::make_unique<GatherWorkload>(options, comm, max_count);
    case Collective::scatter:
      return std::make_unique<ScatterWorkload>(options, comm, max_count);
    case Collective::allgather:
      return std::make_unique<AllgatherWorkload>(options, comm, max_count);
    case Collective::alltoall:
      return std::make_unique<AlltoallWorkload>(options, comm, max_count);
    case Collective::allreduce:
      return std::make_unique<ReduceWorkload>(options, comm, max_count, /*all=*/true);
    case Collective::reduce:
      return std::make_unique<ReduceWorkload>(options, comm, max_count, /*all=*/false);
    case Collective::reduce_scatter:
      return std::make_unique<ReduceScatterWorkload>(options, comm, max_count);
    case Collective::barrier:
      return std::make_unique<BarrierWorkload>(options, comm);
    default:
      return nullptr;
  }
}

}  // namespace colltune::osu_bench
