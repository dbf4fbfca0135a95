// The MCA parameters that make Open MPI run one configuration of coll_tuned, shared by every
// backend that launches real Open MPI (local, slurm).
#pragma once

#include <map>
#include <string>

#include "core/collective.h"
#include "core/tuning_config.h"

namespace colltune {

// Parameters every benchmark run gets: tuned selected and consulted, hcoll excluded (it would
// pre-empt tuned), no rules file unless the caller adds one.
std::map<std::string, std::string> base_mca();

// Forces `config` for `collective`: coll_tuned_use_dynamic_rules 1 and
// coll_tuned_<coll>_algorithm[_segmentsize|_chain_fanout] (only the knobs the algorithm reads;
// docs/reference/open-mpi-rules.md §B.2). The default decision (algorithm 0) sets no forcing
// parameter.
std::map<std::string, std::string> mca_for_config(Collective collective,
                                                  const TuningConfig& config);

// Parameters that load a rules file and nothing forced.
std::map<std::string, std::string> mca_for_rules_file(const std::string& path);

}  // namespace colltune
