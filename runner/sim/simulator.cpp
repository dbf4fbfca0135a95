#include "runner/sim/simulator.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace colltune::sim {

Simulator::Simulator(const ClusterProfile& profile, const Placement& placement)
    : profile_(profile), placement_(placement) {
  if (placement.comm_size < 1 || placement.nodes < 1 || placement.ppn < 1)
    throw std::invalid_argument("invalid placement");
  node_of_rank_.resize(static_cast<std::size_t>(placement.comm_size));
  std::vector<int> ranks_on_node(static_cast<std::size_t>(placement.nodes), 0);
  for (int r = 0; r < placement.comm_size; ++r) {
    const int node = placement.node_of(r);
    if (node < 0 || node >= placement.nodes)
      throw std::invalid_argument("placement maps a rank off the nodes");
    node_of_rank_[r] = node;
    ++ranks_on_node[node];
  }
  cpu_factor_.resize(ranks_on_node.size(), 1.0);
  for (std::size_t n = 0; n < ranks_on_node.size(); ++n) {
    const double load = static_cast<double>(ranks_on_node[n]) / profile.cores_per_node;
    if (load > 1) cpu_factor_[n] = 1 + profile.oversubscription_penalty * (load - 1);
  }
}

namespace {

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

struct Message {
  int src = 0;
  int dst = 0;
  std::int64_t bytes = 0;
  RequestId send_req = kNoRequest;
  RequestId recv_req = kNoRequest;
  double send_post = 0;
  double recv_post = kUnknown;
  double arrival = kUnknown;  // known once the transfer has been scheduled
  const LinkPiece* piece = nullptr;
  bool inter_node = false;
  int next_unmatched = -1;  // next unmatched send on the same link
};

struct PendingReceive {
  RequestId request;
  double post;
  int next = -1;  // next unmatched receive on the same link (index in Run::receives_)
};

// Unmatched operations of one (source, destination) link, each a FIFO threaded through the
// messages (sends) or the pending receives: no allocation per link.
struct Link {
  int send_head = -1, send_tail = -1;  // message indices, in post order
  int recv_head = -1, recv_tail = -1;  // PendingReceive indices, in post order
};

// (source, destination) -> Link, open addressing with linear probing: the links of one run are
// only ever added, and a lookup is one multiply and (almost always) one probe.
class LinkTable {
 public:
  explicit LinkTable(std::size_t expected) {
    std::size_t n = 16;
    shift_ = 60;
    while (n < 2 * expected) n <<= 1, --shift_;
    slots_.assign(n, Slot{});
    links_.reserve(expected);
  }
  Link& operator[](std::uint64_t key) {
    std::size_t i = index(key);
    while (true) {
      Slot& slot = slots_[i];
      if (slot.link < 0) {
        slot.key = key;
        slot.link = static_cast<std::int32_t>(links_.size());
        links_.emplace_back();
        if (2 * links_.size() > slots_.size()) grow();
        return links_.back();
      }
      if (slot.key == key) return links_[static_cast<std::size_t>(slot.link)];
      i = (i + 1) & (slots_.size() - 1);
    }
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::int32_t link = -1;
  };
  std::size_t index(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    --shift_;
    old.swap(slots_);
    for (const Slot& s : old) {
      if (s.link < 0) continue;
      std::size_t i = index(s.key);
      while (slots_[i].link >= 0) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;  // a power of two, at most half full
  int shift_;                // 64 - log2(slots_.size())
  std::vector<Link> links_;
};

struct RankState {
  std::size_t pc = 0;
  double clock = 0;
  bool blocked = false;
  bool finished = false;
  int unknown = 0;           // requests of the current wait still without a completion time
  std::size_t request0 = 0;  // this rank's first request in Run::done_ / Run::awaited_
};

struct Event {
  double time;
  std::uint64_t seq;  // FIFO among equal times, for determinism
  int kind;           // 0 = rank may continue, else a transfer phase (Run::Phase)
  int id;             // rank or message index
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

// Min-queue of events by (time, seq). Keys are unique (seq), so events leave in one order
// whatever the queue's shape: a 4-ary heap, half as deep as a binary one.
class EventQueue {
 public:
  bool empty() const { return heap_.empty(); }
  void reserve(std::size_t n) { heap_.reserve(n); }
  void push(const Event& e) {
    std::size_t i = heap_.size();
    heap_.push_back(e);
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!(heap_[parent] > e)) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  Event pop() {
    const Event top = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return top;
    std::size_t i = 0;
    while (true) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = std::min(first + 4, n);
      for (std::size_t c = first + 1; c < end; ++c)
        if (heap_[best] > heap_[c]) best = c;
      if (!(last > heap_[best])) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = last;
    return top;
  }

 private:
  std::vector<Event> heap_;
};

class Run {
 public:
  Run(const ClusterProfile& profile, const std::vector<int>& node_of_rank,
      const std::vector<double>& cpu_factor, const Schedule& schedule)
      : profile_(profile),
        node_of_(node_of_rank),
        cpu_factor_(cpu_factor),
        schedule_(schedule),
        p_(schedule.comm_size()),
        ranks_(static_cast<std::size_t>(p_)),
        out_free_(static_cast<std::size_t>(p_), 0),
        in_free_(static_cast<std::size_t>(p_), 0),
        memory_free_(cpu_factor.size(), 0),
        nic_out_free_(cpu_factor.size(), 0),
        nic_in_free_(cpu_factor.size(), 0),
        links_(2 * static_cast<std::size_t>(p_)) {
    intra_hold_per_byte_ = hold_per_byte(profile.intra_node);
    inter_hold_per_byte_ = hold_per_byte(profile.inter_node);
    std::size_t sends = 0, requests = 0;
    for (int r = 0; r < p_; ++r) {
      ranks_[r].request0 = requests;
      requests += static_cast<std::size_t>(schedule_.ranks[r].requests());
      for (const Op& op : schedule_.ranks[r].ops())
        if (op.kind == Op::Kind::isend) ++sends;
    }
    done_.assign(requests, kUnknown);
    awaited_.assign(requests, 0);
    events_.reserve(static_cast<std::size_t>(p_) + 64);
    // One Message per send: sized once instead of doubling (a doubling vector holds up to twice
    // what it needs, and three times while it moves), the simulator's largest allocation.
    messages_.reserve(sends);
  }

  SimResult execute() {
    for (int r = 0; r < p_; ++r) push(0.0, 0, r);
    while (!events_.empty()) {
      const Event e = events_.pop();
      ++result_.events;
      if (e.kind == 0) {
        advance(e.id, e.time);
      } else {
        dispatch(e.kind, e.id, e.time);
      }
    }
    result_.rank_time_us.resize(static_cast<std::size_t>(p_));
    double sum = 0;
    result_.min_us = std::numeric_limits<double>::infinity();
    result_.max_us = 0;
    for (int r = 0; r < p_; ++r) {
      if (!ranks_[r].finished)
        throw std::logic_error("simulated schedule deadlocked: rank " + std::to_string(r) +
                               " waits forever at operation " + std::to_string(ranks_[r].pc));
      const double t = ranks_[r].clock;
      result_.rank_time_us[r] = t;
      sum += t;
      result_.min_us = std::min(result_.min_us, t);
      result_.max_us = std::max(result_.max_us, t);
    }
    result_.avg_us = sum / p_;
    return result_;
  }

 private:
  void push(double time, int kind, int id) { events_.push({time, seq_++, kind, id}); }

  const LinkLevel& level(bool inter) const {
    return inter ? profile_.inter_node : profile_.intra_node;
  }

  double latency(const Message& m) const {
    // Shared-memory latency is CPU work on both sides, so oversubscription stretches it.
    return m.inter_node ? m.piece->latency_us : m.piece->latency_us * cpu_factor_[node_of_[m.src]];
  }

  Link& link(int src, int dst) {
    return links_[static_cast<std::uint64_t>(src) * static_cast<std::uint64_t>(p_) +
                  static_cast<std::uint64_t>(dst)];
  }

  // Runs rank `r`'s program from `now` until it blocks in a wait or ends.
  void advance(int r, double now) {
    RankState& st = ranks_[r];
    if (st.finished) return;
    st.clock = std::max(st.clock, now);
    st.blocked = false;
    const RankProgram& prog = schedule_.ranks[r];
    const auto& ops = prog.ops();
    const double cpu = cpu_factor_[node_of_[r]];
    while (st.pc < ops.size()) {
      const Op& op = ops[st.pc];
      switch (op.kind) {
        case Op::Kind::isend: {
          const bool inter = node_of_[r] != node_of_[op.peer];
          const LinkPiece& piece = level(inter).piece_for(op.bytes);
          st.clock += piece.overhead_us * cpu;
          post_send(r, op, st.clock, piece, inter);
          break;
        }
        case Op::Kind::irecv:
          post_receive(r, op, st.clock);
          break;
        case Op::Kind::reduce:
          st.clock += static_cast<double>(op.bytes) * profile_.reduce_ns_per_byte * 1e-3 * cpu;
          break;
        case Op::Kind::wait: {
          if (op.count == 1) {  // the common case, without reading the wait list
            const std::size_t q = st.request0 + static_cast<std::size_t>(op.peer);
            const double d = done_[q];
            if (d != d) {
              awaited_[q] = 1;
              st.blocked = true;
              st.unknown = 1;
              return;
            }
            st.clock = std::max(st.clock, d);
            break;
          }
          const auto& list = prog.wait_list();
          int unknown = 0;
          double latest = st.clock;
          for (std::int32_t i = op.first; i < op.first + op.count; ++i) {
            const std::size_t q = st.request0 + static_cast<std::size_t>(list[i]);
            const double d = done_[q];
            if (d != d) {  // NaN: not yet known
              ++unknown;
              awaited_[q] = 1;
            } else {
              latest = std::max(latest, d);
            }
          }
          if (unknown > 0) {
            st.blocked = true;
            st.unknown = unknown;
            return;
          }
          st.clock = latest;
          break;
        }
      }
      ++st.pc;
    }
    st.finished = true;
  }

  void post_send(int r, const Op& op, double t, const LinkPiece& piece, bool inter) {
    const int index = static_cast<int>(messages_.size());
    Message m;
    m.src = r;
    m.dst = op.peer;
    m.bytes = op.bytes;
    m.send_req = op.first;
    m.send_post = t;
    m.piece = &piece;
    m.inter_node = inter;
    Link& l = link(r, op.peer);
    if (l.recv_head >= 0) {
      const int matched = l.recv_head;
      PendingReceive& pending = receives_[static_cast<std::size_t>(matched)];
      m.recv_req = pending.request;
      m.recv_post = pending.post;
      l.recv_head = pending.next;
      if (l.recv_head < 0) l.recv_tail = -1;
      pending.next = free_receive_;  // the entry is reused by a later receive
      free_receive_ = matched;
    } else {
      if (l.send_tail >= 0)
        messages_[static_cast<std::size_t>(l.send_tail)].next_unmatched = index;
      else
        l.send_head = index;
      l.send_tail = index;
    }
    messages_.push_back(m);
    if (inter) {
      ++result_.inter_node_messages;
      result_.inter_node_bytes += m.bytes;
    } else {
      ++result_.intra_node_messages;
      result_.intra_node_bytes += m.bytes;
    }
    if (piece.protocol == Protocol::eager) {
      push(t, kInjectPort, index);
    } else if (m.recv_req != kNoRequest) {
      push(rendezvous_ready(messages_[index]), kPullPort, index);
    }
  }

  double rendezvous_ready(const Message& m) const {
    const double l = latency(m);
    return std::max(m.send_post + l, m.recv_post) + l;
  }

  void post_receive(int r, const Op& op, double t) {
    Link& l = link(op.peer, r);
    if (l.send_head < 0) {
      int pending = free_receive_;
      if (pending >= 0) {
        free_receive_ = receives_[static_cast<std::size_t>(pending)].next;
        receives_[static_cast<std::size_t>(pending)] = {op.first, t, -1};
      } else {
        pending = static_cast<int>(receives_.size());
        receives_.push_back({op.first, t, -1});
      }
      if (l.recv_tail >= 0)
        receives_[static_cast<std::size_t>(l.recv_tail)].next = pending;
      else
        l.recv_head = pending;
      l.recv_tail = pending;
      return;
    }
    const int index = l.send_head;
    Message& m = messages_[static_cast<std::size_t>(index)];
    l.send_head = m.next_unmatched;
    if (l.send_head < 0) l.send_tail = -1;
    m.recv_req = op.first;
    m.recv_post = t;
    if (m.piece->protocol == Protocol::rendezvous) {
      push(rendezvous_ready(m), kPullPort, index);
    } else if (m.arrival == m.arrival) {  // eager data already here (unexpected message)
      complete(r, m.recv_req, std::max(m.arrival, t) + receive_overhead(m));
    }
  }

  double receive_overhead(const Message& m) const {
    return m.piece->overhead_us * cpu_factor_[node_of_[m.dst]];
  }

  // Transfers claim resources in phases, each processed at the time it asks: first the
  // rank's own port (first come, first served), then, from the time the port is theirs, the
  // level's shared resource. Claims are made in simulated-time order, so nobody reserves a
  // resource ahead of an earlier request.
  enum Phase {
    kInjectPort = 1,
    kInjectShared,
    kReceivePort,
    kReceiveShared,
    kPullPort,
    kPullShared
  };

  void dispatch(int phase, int index, double now) {
    switch (phase) {
      case kInjectPort:
        return inject_port(index, now);
      case kInjectShared:
        return inject_shared(index, now);
      case kReceivePort:
        return receive_port(index, now);
      case kReceiveShared:
        return receive_shared(index, now);
      case kPullPort:
        return pull_port(index, now);
      case kPullShared:
        return pull_shared(index, now);
      default:
        return;
    }
  }

  double duration(const Message& m) const { return m.piece->wire_time_us(m.bytes); }
  double hold(const Message& m) const {
    return static_cast<double>(m.bytes) *
           (m.inter_node ? inter_hold_per_byte_ : intra_hold_per_byte_);
  }
  double& shared_out(const Message& m) {
    return m.inter_node ? nic_out_free_[node_of_[m.src]] : memory_free_[node_of_[m.src]];
  }
  double& shared_in(const Message& m) {
    return m.inter_node ? nic_in_free_[node_of_[m.dst]] : memory_free_[node_of_[m.dst]];
  }

  // Eager: the sender pushes the data out through its port and its node's NIC (or memory) and
  // is done; the receiving end is claimed when the data gets there, so a busy receiver delays
  // the arrival, not the sender.
  void inject_port(int i, double now) {
    Message& m = messages_[i];
    const double start = std::max(now, out_free_[m.src]);
    out_free_[m.src] = start + duration(m);
    if (hold(m) > 0) {
      // Claim the shared resource now if the port is ours now; else when it is.
      if (start <= now) return inject_shared(i, now);
      return push(start, kInjectShared, i);
    }
    injected(i, start);
  }
  void inject_shared(int i, double now) {
    Message& m = messages_[i];
    double& shared = shared_out(m);
    const double start = std::max(now, shared);
    shared = start + hold(m);
    out_free_[m.src] = std::max(out_free_[m.src], start + duration(m));
    injected(i, start);
  }
  void injected(int i, double start) {
    Message& m = messages_[i];
    complete(m.src, m.send_req, start + duration(m));
    push(start + latency(m), kReceivePort, i);
  }
  void receive_port(int i, double now) {
    Message& m = messages_[i];
    const double start = std::max(now, in_free_[m.dst]);
    in_free_[m.dst] = start + duration(m);
    if (hold(m) > 0) {
      // Claim the shared resource now if the port is ours now; else when it is.
      if (start <= now) return receive_shared(i, now);
      return push(start, kReceiveShared, i);
    }
    received(i, start + duration(m));
  }
  void receive_shared(int i, double now) {
    Message& m = messages_[i];
    double& shared = shared_in(m);
    const double start = std::max(now, shared);
    shared = start + hold(m);
    in_free_[m.dst] = std::max(in_free_[m.dst], start + duration(m));
    received(i, start + duration(m));
  }

  // Rendezvous: the receiver pulls the data (single copy, RDMA read) once both sides are
  // ready; the sender's port stays free, so it can feed several receivers at once, and its
  // send completes when the data has been read.
  void pull_port(int i, double now) {
    Message& m = messages_[i];
    const double start = std::max(now, in_free_[m.dst]);
    in_free_[m.dst] = start + duration(m);
    if (hold(m) > 0) {
      // Claim the shared resource now if the port is ours now; else when it is.
      if (start <= now) return pull_shared(i, now);
      return push(start, kPullShared, i);
    }
    pulled(i, start);
  }
  void pull_shared(int i, double now) {
    Message& m = messages_[i];
    double& in = shared_in(m);
    double start = std::max(now, in);
    if (m.inter_node) start = std::max(start, shared_out(m));
    in = start + hold(m);
    if (m.inter_node) shared_out(m) = start + hold(m);
    in_free_[m.dst] = std::max(in_free_[m.dst], start + duration(m));
    pulled(i, start);
  }
  void pulled(int i, double start) {
    Message& m = messages_[i];
    complete(m.src, m.send_req, start + duration(m));
    received(i, start + latency(m) + duration(m));
  }

  void received(int i, double arrival) {
    Message& m = messages_[i];
    m.arrival = arrival;
    if (m.recv_req != kNoRequest)
      complete(m.dst, m.recv_req, std::max(m.arrival, m.recv_post) + receive_overhead(m));
  }

  void complete(int r, RequestId request, double time) {
    RankState& st = ranks_[r];
    const std::size_t q = st.request0 + static_cast<std::size_t>(request);
    done_[q] = time;
    if (!st.blocked || !awaited_[q]) return;
    if (--st.unknown > 0) return;
    // Every request of the wait is known: the rank continues when the last one completes.
    const Op& op = schedule_.ranks[r].ops()[st.pc];
    double latest = st.clock;
    if (op.count == 1) {
      latest = std::max(latest, time);
    } else {
      const auto& list = schedule_.ranks[r].wait_list();
      for (std::int32_t i = op.first; i < op.first + op.count; ++i)
        latest = std::max(latest, done_[st.request0 + static_cast<std::size_t>(list[i])]);
    }
    st.blocked = false;
    push(latest, 0, r);
  }

  // Microseconds a byte holds the level's shared resource: contention / peak bandwidth.
  static double hold_per_byte(const LinkLevel& level) {
    double peak = 0;
    for (const auto& p : level.pieces) peak = std::max(peak, p.bandwidth_gbps);
    return peak > 0 ? level.contention / (peak * 1e3) : 0;
  }

  const ClusterProfile& profile_;
  double intra_hold_per_byte_ = 0;
  double inter_hold_per_byte_ = 0;
  const std::vector<int>& node_of_;
  const std::vector<double>& cpu_factor_;
  const Schedule& schedule_;
  int p_;
  std::vector<RankState> ranks_;
  std::vector<Message> messages_;
  std::vector<PendingReceive> receives_;  // receives posted before their send (and free ones)
  int free_receive_ = -1;                 // free entries of receives_, linked through next
  std::vector<double> done_;              // per request (RankState::request0 + id): completion
  std::vector<char> awaited_;             // per request: the rank's current wait needs it
  EventQueue events_;
  std::uint64_t seq_ = 0;
  std::vector<double> out_free_, in_free_;
  std::vector<double> memory_free_, nic_out_free_, nic_in_free_;
  LinkTable links_;  // grows as links appear
  SimResult result_;
};

}  // namespace

SimResult Simulator::run(const Schedule& schedule) const {
  if (schedule.comm_size() != placement_.comm_size)
    throw std::invalid_argument("schedule has " + std::to_string(schedule.comm_size()) +
                                " ranks but the placement " + std::to_string(placement_.comm_size));
  Run run(profile_, node_of_rank_, cpu_factor_, schedule);
  return run.execute();
}

}  // namespace colltune::sim
