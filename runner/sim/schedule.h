// The message schedule of one collective call: for every rank, the point-to-point operations
// Open MPI's algorithm performs, in program order (non-blocking sends and receives, waits, local
// reductions). Algorithm builders (collective_schedules.h) write it; the simulator executes it;
// summarize() counts messages and bytes per link for tests.
//
// Matching follows MPI with one tag and no wildcards: the k-th send from A to B matches the
// k-th receive posted by B from A. A message carries the sender's byte count.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace colltune::sim {

using RequestId = std::int32_t;
inline constexpr std::int64_t kDefaultMaxMessages = 4'000'000;
inline constexpr RequestId kNoRequest = -1;

struct Op {
  enum class Kind : std::uint8_t { isend, irecv, wait, reduce };
  Kind kind = Kind::wait;
  std::int32_t peer = -1;  // isend / irecv; wait of one request: that request (else -1)
  std::int64_t bytes = 0;  // isend / irecv: bytes; reduce: bytes combined by the operator
  std::int32_t first = 0;  // isend / irecv: request id; wait: start in RankProgram::wait_list
  std::int32_t count = 0;  // wait: number of requests
};

// A schedule would send more messages than the caller allowed (simulation too expensive).
class ScheduleTooLarge : public std::length_error {
 public:
  using std::length_error::length_error;
};

class RankProgram {
 public:
  RankProgram() = default;
  // `budget` (shared by all ranks of a schedule) counts down per send; at zero, isend throws
  // ScheduleTooLarge.
  explicit RankProgram(std::shared_ptr<std::int64_t> budget) : budget_(std::move(budget)) {}

  RequestId isend(int peer, std::int64_t bytes);
  RequestId irecv(int peer, std::int64_t bytes);
  void wait(RequestId request);  // kNoRequest (MPI_REQUEST_NULL) is ignored
  void wait_all(std::initializer_list<RequestId> requests);
  void wait_all(const std::vector<RequestId>& requests);
  void send(int peer, std::int64_t bytes) { wait(isend(peer, bytes)); }
  void recv(int peer, std::int64_t bytes) { wait(irecv(peer, bytes)); }
  // ompi_coll_base_sendrecv: post the receive, blocking send, then wait for the receive.
  void sendrecv(int dest, std::int64_t send_bytes, int source, std::int64_t recv_bytes);
  void reduce(std::int64_t bytes);

  const std::vector<Op>& ops() const { return ops_; }
  const std::vector<RequestId>& wait_list() const { return wait_list_; }
  int requests() const { return next_request_; }
  // Gives back what the vectors reserved beyond their size while the program grew (up to half
  // of them); called once the schedule is complete.
  void shrink_to_fit() {
    ops_.shrink_to_fit();
    wait_list_.shrink_to_fit();
  }

 private:
  std::vector<Op> ops_;
  std::vector<RequestId> wait_list_;
  RequestId next_request_ = 0;
  std::shared_ptr<std::int64_t> budget_;
};

struct Schedule {
  // At most `max_messages` sends in total (ScheduleTooLarge beyond).
  explicit Schedule(int comm_size, std::int64_t max_messages = kDefaultMaxMessages);
  int comm_size() const { return static_cast<int>(ranks.size()); }
  RankProgram& rank(int r) { return ranks.at(static_cast<std::size_t>(r)); }
  // A builder that knows it is about to add at least `sends` sends calls this first: it throws
  // ScheduleTooLarge now, exactly when the sends themselves would, without building them.
  void expect_sends(std::int64_t sends) const;

  std::vector<RankProgram> ranks;
  // The coll/base functions that ran, outermost first, in the tracer's words (docs/reference/
  // open-mpi-rules.md §B.3), e.g. {"bcast_intra_split_bintree segsize=8192", "bcast_intra_chain
  // segsize=8192 fanout=1"} when split_bintree falls back to a pipeline.
  std::vector<std::string> trace;

 private:
  std::shared_ptr<std::int64_t> budget_;  // sends left (shared with every RankProgram)
};

struct LinkTraffic {
  std::int64_t messages = 0;
  std::int64_t bytes = 0;
};

struct ScheduleSummary {
  std::int64_t messages = 0;
  std::int64_t bytes = 0;
  std::int64_t reduce_bytes = 0;                     // summed over ranks
  std::map<std::pair<int, int>, LinkTraffic> links;  // (source, destination)
  std::vector<std::int64_t> sends;                   // messages sent per rank
  std::vector<std::int64_t> receives;                // messages received per rank
  std::vector<std::int64_t> reduce_ops;              // reduction calls per rank
};

// Counts what the schedule sends; throws std::logic_error when a link's sends and receives do
// not pair up (a schedule that would hang).
ScheduleSummary summarize(const Schedule& schedule);

}  // namespace colltune::sim
