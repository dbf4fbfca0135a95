// The communicator sizes and layouts of a campaign as `colltune tune` takes them
// (docs/whole-cluster.md "Input"):
//
//   --np 2,4,8,16        explicit sizes
//   --np 2:64            powers of two times the first: 2, 4, 8, 16, 32, 64 (the last number must
//                        be reached exactly: 3:64 is refused, 3:48 is 3, 6, 12, 24, 48)
//   --np 2:8:1           every size from 2 to 8 in steps of 1 (again the end must be reached)
//   --np 2,3,8:32        items combine; a size given twice is refused
//   --nodes 1,2,4 --ppn 1,16   every nodes x ppn combination (Slurm); combinations below 2 ranks
//                        are left out (coll_tuned does not run there). Where two combinations
//                        give the same size, --layout packed (fewest nodes) or spread (most
//                        nodes) picks one; without it the command is refused.
//   --layout 2x16,4x16   explicit nodes x ranks-per-node
//
// Every size is at least 2; sizes come out ascending.
#pragma once

#include <string>
#include <vector>

namespace colltune {

struct CommLayout {
  int comm_size = 0;
  int nodes = 1;
  int ppn = 0;  // 0 = comm_size / nodes, placed by the backend
  bool operator==(const CommLayout&) const = default;
};

// Throws std::invalid_argument with the reason ("--np: 3:64 does not reach 64 ...").
std::vector<int> parse_comm_sizes(const std::string& text, const std::string& flag = "--np");

// The layouts from the tune flags; empty strings = flag not given (np defaults to "4", nodes
// to "1"). Throws std::invalid_argument with the reason.
std::vector<CommLayout> plan_layouts(const std::string& np, const std::string& nodes,
                                     const std::string& ppn, const std::string& layout);

}  // namespace colltune
