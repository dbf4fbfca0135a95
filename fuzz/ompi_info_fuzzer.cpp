// Fuzzes AlgorithmTable::from_ompi_info (core/algorithm_table.h), the reader of
// `ompi_info --param coll tuned --level 9 --parsable`. Contracts checked: text without
// enumerators throws std::runtime_error only; a parsed table answers every lookup without
// crashing, its algorithm ids are ascending within 1..count-1.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "core/algorithm_table.h"
#include "fuzz/fuzz_support.h"

using namespace colltune;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  AlgorithmTable table;
  try {
    table = AlgorithmTable::from_ompi_info(text);
  } catch (const std::runtime_error&) {
    return 0;
  }
  for (const auto& [collective, algorithms] : table.entries()) {
    int previous = 0;
    for (const auto& a : algorithms.algorithms) {
      FUZZ_CHECK(a.id > previous);
      FUZZ_CHECK(a.id < algorithms.algorithm_count);
      previous = a.id;
      FUZZ_CHECK(algorithms.find(a.id) != nullptr);
      FUZZ_CHECK(algorithms.find(a.name) != nullptr);
    }
    for (int p : {1, 2, 3, 64}) (void)table.usable(collective, p);
    for (int id : {-1, 0, 1, 7, 1000}) (void)table.algorithm_name(collective, id);
  }
  return 0;
}
