#include "runner/sim/schedule.h"

#include <stdexcept>

namespace colltune::sim {

Schedule::Schedule(int comm_size, std::int64_t max_messages)
    : budget_(std::make_shared<std::int64_t>(max_messages)) {
  ranks.reserve(static_cast<std::size_t>(comm_size));
  for (int r = 0; r < comm_size; ++r) ranks.emplace_back(budget_);
}

void Schedule::expect_sends(std::int64_t sends) const {
  if (sends > *budget_) throw ScheduleTooLarge("the schedule sends too many messages to simulate");
}

RequestId RankProgram::isend(int peer, std::int64_t bytes) {
  if (budget_ && --*budget_ < 0)
    throw ScheduleTooLarge("the schedule sends too many messages to simulate");
  const RequestId id = next_request_++;
  ops_.push_back({Op::Kind::isend, peer, bytes, id, 0});
  return id;
}

RequestId RankProgram::irecv(int peer, std::int64_t bytes) {
  const RequestId id = next_request_++;
  ops_.push_back({Op::Kind::irecv, peer, bytes, id, 0});
  return id;
}

void RankProgram::wait(RequestId request) {
  if (request == kNoRequest) return;
  wait_all({request});
}

void RankProgram::wait_all(std::initializer_list<RequestId> requests) {
  const auto first = static_cast<std::int32_t>(wait_list_.size());
  for (RequestId r : requests)
    if (r != kNoRequest) wait_list_.push_back(r);
  const auto count = static_cast<std::int32_t>(wait_list_.size()) - first;
  if (count > 0)
    ops_.push_back({Op::Kind::wait, count == 1 ? wait_list_.back() : -1, 0, first, count});
}

void RankProgram::wait_all(const std::vector<RequestId>& requests) {
  const auto first = static_cast<std::int32_t>(wait_list_.size());
  for (RequestId r : requests)
    if (r != kNoRequest) wait_list_.push_back(r);
  const auto count = static_cast<std::int32_t>(wait_list_.size()) - first;
  if (count > 0)
    ops_.push_back({Op::Kind::wait, count == 1 ? wait_list_.back() : -1, 0, first, count});
}

void RankProgram::sendrecv(int dest, std::int64_t send_bytes, int source, std::int64_t recv_bytes) {
  const RequestId r = irecv(source, recv_bytes);
  send(dest, send_bytes);
  wait(r);
}

void RankProgram::reduce(std::int64_t bytes) {
  if (bytes > 0) ops_.push_back({Op::Kind::reduce, -1, bytes, 0, 0});
}

ScheduleSummary summarize(const Schedule& schedule) {
  const int n = schedule.comm_size();
  ScheduleSummary s;
  s.sends.assign(n, 0);
  s.receives.assign(n, 0);
  s.reduce_ops.assign(n, 0);
  std::map<std::pair<int, int>, std::int64_t> posted_receives;
  for (int r = 0; r < n; ++r) {
    for (const Op& op : schedule.ranks[r].ops()) {
      switch (op.kind) {
        case Op::Kind::isend: {
          if (op.peer < 0 || op.peer >= n || op.peer == r)
            throw std::logic_error("rank " + std::to_string(r) + " sends to invalid peer " +
                                   std::to_string(op.peer));
          auto& link = s.links[{r, op.peer}];
          ++link.messages;
          link.bytes += op.bytes;
          ++s.messages;
          s.bytes += op.bytes;
          ++s.sends[r];
          break;
        }
        case Op::Kind::irecv:
          if (op.peer < 0 || op.peer >= n || op.peer == r)
            throw std::logic_error("rank " + std::to_string(r) + " receives from invalid peer " +
                                   std::to_string(op.peer));
          ++posted_receives[{op.peer, r}];
          ++s.receives[r];
          break;
        case Op::Kind::reduce:
          s.reduce_bytes += op.bytes;
          ++s.reduce_ops[r];
          break;
        case Op::Kind::wait:
          break;
      }
    }
  }
  for (const auto& [link, traffic] : s.links) {
    const auto it = posted_receives.find(link);
    const std::int64_t receives = it == posted_receives.end() ? 0 : it->second;
    if (receives != traffic.messages)
      throw std::logic_error("link " + std::to_string(link.first) + "->" +
                             std::to_string(link.second) + " has " +
                             std::to_string(traffic.messages) + " sends but " +
                             std::to_string(receives) + " receives");
  }
  for (const auto& [link, receives] : posted_receives)
    if (!s.links.contains(link))
      throw std::logic_error("link " + std::to_string(link.first) + "->" +
                             std::to_string(link.second) + " has " + std::to_string(receives) +
                             " receives but no sends");
  return s;
}

}  // namespace colltune::sim
