// Builds the message schedule of one OSU iteration of a collective under one coll_tuned
// configuration, as Open MPI 4.1.x runs it when the configuration is forced with MCA
// parameters (what the local and Slurm backends measure): same trees, same segmentation, same
// fallbacks (docs/reference/open-mpi-rules.md §2), and for algorithm 0 the fixed decision (§3).
//
// Workload as OSU 5.6.2 runs it: root 0; bcast and gather use MPI_CHAR (count = OSU size; for
// gather per rank); reduce and allreduce use MPI_FLOAT with MPI_SUM (count = size / 4).
// Modelled collectives: bcast, reduce, allreduce, gather.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/collective.h"
#include "core/tuning_config.h"
#include "runner/sim/schedule.h"

namespace colltune::sim {

struct CallSpec {
  Collective collective = Collective::bcast;
  int comm_size = 2;
  TuningConfig config;        // algorithm 0 = Open MPI's fixed decision
  std::int64_t osu_size = 4;  // bytes as OSU prints them
  int knomial_radix = 4;      // coll_tuned_bcast_algorithm_knomial_radix
  // Chain fan-out when a forced chain has fanout 0: the MCA parameter is then not set and keeps
  // its default (coll_tuned_<coll>_algorithm_chain_fanout = 4). The fixed decision passes 0,
  // which the chain builder turns into 1.
  int forced_chain_fanout = 4;
  std::int64_t max_messages = kDefaultMaxMessages;  // ScheduleTooLarge beyond
};

// The algorithm id is not one of Open MPI 4.1's (the real collective returns MPI_ERR_ARG).
class AlgorithmOutOfRange : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// True for the collectives the simulator models.
bool sim_models(Collective collective);

// Throws std::invalid_argument for a collective not modelled, comm_size < 2 or a size < 1,
// AlgorithmOutOfRange for an unknown algorithm id, ScheduleTooLarge past max_messages.
Schedule build_schedule(const CallSpec& spec);

// COLL_BASE_COMPUTED_SEGCOUNT: elements per segment for a segment size in bytes (rounded to the
// nearest element); `count` when segsize is 0, below one element, or not below the message.
std::int64_t computed_segcount(std::int64_t segsize, std::int64_t type_size, std::int64_t count);

}  // namespace colltune::sim
