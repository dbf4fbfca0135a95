// Inputs the ompi_info fuzzer (fuzz/ompi_info_fuzzer.cpp) found, and its seed corpus, fed to
// AlgorithmTable::from_ompi_info: each gives a table with sane ids or a clean runtime_error.
#include <gtest/gtest.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/algorithm_table.h"
#include "core/file_text.h"
#include "core/ompi_version.h"
#include "tests/fuzz_inputs.h"

namespace colltune {
namespace {

using fuzz_inputs::inputs;

void expect_sane(const AlgorithmTable& table, const std::string& what) {
  for (const auto& [collective, entry] : table.entries()) {
    int previous = 0;
    for (const auto& a : entry.algorithms) {
      EXPECT_GT(a.id, previous) << what;
      EXPECT_LT(a.id, entry.algorithm_count) << what;
      previous = a.id;
    }
  }
}

TEST(OmpiInfoFuzzRegression, SavedInputsGiveATableOrACleanError) {
  const auto files = inputs("ompi_info_fuzzer");
  ASSERT_GE(files.size(), 3u) << COLLTUNE_FUZZ_DIR;
  int parsed = 0;
  for (const auto& f : files) {
    try {
      expect_sane(AlgorithmTable::from_ompi_info(read_file_text(f).value_or("")), f.string());
      ++parsed;
    } catch (const std::runtime_error&) {
    }
  }
  EXPECT_GT(parsed, 0);  // the recorded outputs of real ompi_info do parse
}

TEST(OmpiInfoFuzzRegression, NegativeAndHugeIdsAreNotAlgorithms) {
  const std::string prefix = "mca:coll:tuned:param:coll_tuned_bcast_algorithm:enumerator:value:";
  // Only out-of-range ids: no enumerator left, so the text is rejected like garbage.
  EXPECT_THROW(AlgorithmTable::from_ompi_info(prefix + "-8:chain\n" + prefix +
                                              std::to_string(INT_MAX) + ":pipeline\n"),
               std::runtime_error);
  const auto table =
      AlgorithmTable::from_ompi_info(prefix + "0:ignore\n" + prefix + "-3:bad\n" + prefix +
                                     "2:chain\n" + prefix + std::to_string(INT_MAX) + ":huge\n");
  const auto& bcast = table.at(Collective::bcast);
  EXPECT_EQ(bcast.algorithm_count, 3);
  ASSERT_EQ(bcast.algorithms.size(), 1u);
  EXPECT_EQ(bcast.algorithms[0].name, "chain");
}

}  // namespace
}  // namespace colltune

namespace colltune {
namespace {

// Found by the ompi_info fuzzer: `mca:coll:tuned:version:"component:5555555555..."` overflowed
// int while parse_ompi_version accumulated digits (UBSan). Now a component saturates.
TEST(OmpiInfoFuzzRegression, LongDigitRunsInAVersionDoNotOverflow) {
  const auto v = parse_ompi_version("component:99999999999999999999.1.4");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->major, INT_MAX);
  EXPECT_EQ(v->minor, 1);
  EXPECT_EQ(v->patch, 4);
  EXPECT_EQ(parse_ompi_version("4.1.4")->to_string(), "4.1.4");
  const auto table = AlgorithmTable::from_ompi_info(
      "mca:coll:tuned:version:\"component:4.5555555555555555555\"\n"
      "mca:coll:tuned:param:coll_tuned_bcast_algorithm:enumerator:value:1:basic_linear\n");
  ASSERT_TRUE(table.version.has_value());
  EXPECT_EQ(table.version->minor, INT_MAX);
}

}  // namespace
}  // namespace colltune
