// Which coll_tuned algorithms an Open MPI installation has, and which knobs each one really
// reads (docs/reference/open-mpi-rules.md §2, §2.9). Built from `ompi_info --param coll tuned
// --level 9 --parsable` text when available, with the built-in Open MPI 4.1.x table as fallback.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/collective.h"
#include "core/ompi_version.h"

namespace colltune {

struct AlgorithmInfo {
  int id = 0;
  std::string name;
  bool uses_segsize = false;      // the rule's SEGSIZE changes what runs
  bool uses_fanout = false;       // the rule's FANINOUT changes what runs (chain fan-out)
  bool only_two_procs = false;    // fails unless the communicator has exactly 2 ranks
  bool commutative_only = false;  // wrong results for non-commutative user ops (no guard)
};

struct CollectiveAlgorithms {
  // Number of enum values including 0 = "ignore", as `coll_tuned_<coll>_algorithm_count`.
  int algorithm_count = 0;
  std::vector<AlgorithmInfo> algorithms;  // ids 1..count-1, ascending

  const AlgorithmInfo* find(int id) const;
  const AlgorithmInfo* find(std::string_view name) const;
};

class AlgorithmTable {
 public:
  // The table compiled into Open MPI 4.1.x (4.1.0-4.1.8 share it).
  static const AlgorithmTable& builtin_4_1();

  // Parses `ompi_info --param coll tuned --level 9 --parsable` output. Algorithm ids and names
  // come from the `...:coll_tuned_<coll>_algorithm:enumerator:value:<id>:<name>` lines; knob
  // usage for known names comes from the built-in table. Collectives absent from the text keep
  // the built-in entry. Throws std::runtime_error when the text holds no algorithm enumerators.
  static AlgorithmTable from_ompi_info(std::string_view parsable_text);

  // nullptr when the collective is not in the table.
  const CollectiveAlgorithms* find(Collective c) const;
  const CollectiveAlgorithms& at(Collective c) const;  // throws std::out_of_range

  // Algorithms usable on a communicator of `comm_size` ranks (drops two_proc unless P == 2).
  std::vector<AlgorithmInfo> usable(Collective c, int comm_size) const;

  // Display name of an algorithm id ("default" for 0, "alg<N>" when unknown).
  std::string algorithm_name(Collective c, int id) const;

  const std::map<Collective, CollectiveAlgorithms>& entries() const { return entries_; }
  std::optional<OmpiVersion> version;  // from ompi_info text when it says so

 private:
  std::map<Collective, CollectiveAlgorithms> entries_;
};

}  // namespace colltune
