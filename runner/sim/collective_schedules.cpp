#include "runner/sim/collective_schedules.h"

#include "core/fixed_decision.h"
#include "core/segment_count.h"
#include "runner/sim/algorithms.h"

namespace colltune::sim {

bool sim_models(Collective collective) {
  return collective == Collective::bcast || collective == Collective::reduce ||
         collective == Collective::allreduce || collective == Collective::gather;
}

std::int64_t computed_segcount(std::int64_t segsize, std::int64_t type_size, std::int64_t count) {
  return coll_segment_count(segsize, type_size, count);
}

Schedule build_schedule(const CallSpec& spec) {
  if (!sim_models(spec.collective))
    throw std::invalid_argument("the simulator does not model " +
                                std::string(name(spec.collective)) +
                                " (bcast, reduce, allreduce and gather only)");
  if (spec.comm_size < 2) throw std::invalid_argument("comm_size must be >= 2");
  if (spec.osu_size < 1) throw std::invalid_argument("message size must be >= 1 byte");
  if (spec.config.algorithm < 0) throw AlgorithmOutOfRange("negative algorithm id");
  if (spec.config.segsize < 0 || spec.config.fanout < 0)
    throw std::invalid_argument("negative segment size or fan-out");

  const bool reduction =
      spec.collective == Collective::reduce || spec.collective == Collective::allreduce;
  const std::int64_t type_size = reduction ? 4 : 1;
  // OSU 5.x reductions: count = size / 4 floats (sizes start at 4 bytes).
  const std::int64_t count = reduction ? spec.osu_size / 4 : spec.osu_size;
  if (count < 1) throw std::invalid_argument("reductions need at least 4 bytes (one float)");

  Schedule schedule(spec.comm_size, spec.max_messages);
  algo::Context c{schedule, spec.comm_size, type_size, spec.knomial_radix};
  int id = spec.config.algorithm;
  int segsize = spec.config.segsize;
  int fanout = spec.config.fanout > 0 ? spec.config.fanout : spec.forced_chain_fanout;
  if (id == 0) {
    // The fixed decision: unsegmented, fan-out 0 (a chain then becomes a single pipeline).
    id = *fixed_decision_4_1(spec.collective, spec.comm_size, count * type_size);
    segsize = 0;
    fanout = 0;
    c.trace(std::string(name(spec.collective)) + "_intra_dec_fixed alg=" + std::to_string(id));
  }
  switch (spec.collective) {
    case Collective::bcast:
      algo::bcast_by_id(c, id, count, segsize, fanout);
      break;
    case Collective::reduce:
      algo::reduce_by_id(c, id, count, segsize, fanout);
      break;
    case Collective::allreduce:
      algo::allreduce_by_id(c, id, count, segsize);
      break;
    case Collective::gather:
      algo::gather_by_id(c, id, count, segsize);
      break;
    default:
      break;
  }
  // The simulation of this schedule allocates next: return the growth slack first.
  for (auto& rank : schedule.ranks) rank.shrink_to_fit();
  return schedule;
}

}  // namespace colltune::sim
