// Proof that Open MPI applied a rules file: compares, per OSU message size, the configuration
// the rules select (by Open MPI's own lookup, or its fixed decision where no rule applies)
// with what the tracer saw running in a job made with the file loaded.
//
// How a run for verify_trace is made (local backend): OSU (or any program) with
//   extra_mca = {coll_tuned_use_dynamic_rules: 1, coll_tuned_dynamic_rules_filename: FILE},
//   extra_env = {LD_PRELOAD: tracer_library_path(), COLLTUNE_TRACE_DIR: DIR},
//   configs = {default}
// then read_trace_dir(DIR).
//
// Trace "bytes" are per-rank bytes, equal to the OSU size for every collective (the tuned key
// for gather/scatter/allgather/alltoall is bytes x P; verify_trace converts). Which trace
// fields a rule controls: bcast chain: segsize, fanout; bcast pipeline..knomial and
// scatter_allgather(_ring): segsize (knomial's fanout is the MCA radix); reduce chain:
// segsize, fanout, max_requests; reduce pipeline/binary/binomial/in_order_binary: segsize,
// max_requests; allreduce segmented ring: segsize; gather linear_sync: segsize (first segment);
// alltoall linear_sync: max_requests. Other functions take none of them. For the fixed
// decision only the algorithm is compared.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/algorithm_table.h"
#include "core/collective.h"
#include "rules/rules_model.h"
#include "rules/trace.h"

namespace colltune {

struct ExpectedChoice {
  int algorithm = 0;                 // what must run; 0 only when the fixed decision is unknown
  bool from_fixed_decision = false;  // no rule applies, or the rule says algorithm 0
  bool any_algorithm = false;        // fixed decision not transcribed: any algorithm matches
  bool call_fails = false;  // rule algorithm outside the release's table: Open MPI fails the
                            // call (MPI_ERR_ARG) before running any algorithm
  std::optional<std::int64_t> segsize;  // compared when set
  std::optional<std::int64_t> fanout;
  std::optional<std::int64_t> max_requests;
};

struct ObservedChoice {
  std::string function;
  int algorithm = 0;  // via algorithm_for_function
  std::optional<std::int64_t> segsize, fanout, max_requests;
  std::int64_t min_calls = 0;  // fewest calls over the ranks that recorded it
  std::vector<int> ranks;
};

enum class VerifyStatus {
  match,
  mismatch,      // something else ran (or parameters differ)
  not_observed,  // nothing of this collective ran at this size with enough calls
  ambiguous,     // several configurations ran at this size (e.g. ranks disagree)
};
std::string_view to_string(VerifyStatus status);

struct VerificationRow {
  std::int64_t osu_size = 0;
  std::int64_t rules_key = 0;
  ExpectedChoice expected;
  std::vector<ObservedChoice> observed;
  VerifyStatus status = VerifyStatus::not_observed;
  std::string detail;  // why it does not match
};

struct VerificationReport {
  Collective collective = Collective::bcast;
  int comm_size = 0;
  std::vector<VerificationRow> rows;

  int matches() const;
  bool all_match() const { return matches() == static_cast<int>(rows.size()); }
  // Human table: size, key, expected, observed, status.
  std::string to_text(const AlgorithmTable& algorithms = AlgorithmTable::builtin_4_1()) const;
};

struct VerifyOptions {
  // A configuration counts as having run at a size when each rank that recorded it made at
  // least this many calls; use the benchmark's iteration count (warm-up excluded) so that
  // stray calls (OSU's own reductions of timings) cannot pass for the measured collective.
  std::int64_t min_calls = 1;
  LookupSemantics semantics = LookupSemantics::ompi_4_1;
  bool commutative_op = true;  // OSU reduces with MPI_SUM
  // Ignore reduce calls of one MPI_DOUBLE (bytes 8, dtsize 8): OSU's reduction of its timings.
  bool ignore_osu_timing_reduce = true;
  const AlgorithmTable* algorithms = nullptr;  // default AlgorithmTable::builtin_4_1()
};

// The configuration Open MPI 4.1.x runs for an OSU-sized call, from the model and the fixed
// decision.
ExpectedChoice expected_choice(const RulesModel& model, Collective collective, int comm_size,
                               std::int64_t osu_size, const VerifyOptions& options = {});

VerificationReport verify_trace(const RulesModel& model, Collective collective, int comm_size,
                                const std::vector<std::int64_t>& osu_sizes, const TraceData& trace,
                                const VerifyOptions& options = {});

}  // namespace colltune
