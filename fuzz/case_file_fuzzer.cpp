// libFuzzer target: the case-file reader on arbitrary bytes. case_from_json returns a valid case or throws
// CaseFileError; anything else (another exception, a crash, a sanitizer report, a hang, an allocation over
// -malloc_limit_mb) is a bug. An accepted case must round-trip bit for bit (write, read, write: the same text).
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "problem/case_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pacheck;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Case c;
  try {
    c = case_from_json(text);
  } catch (const CaseFileError&) {
    return 0;  // refused with a message: the expected outcome for almost every input
  }
  if (!validation_errors(c.problem).empty()) {
    std::fprintf(stderr, "case_file_fuzzer: case_from_json returned an invalid problem\n");
    __builtin_trap();
  }
  const std::string written = case_to_json(c);
  Case back;
  try {
    back = case_from_json(written);
  } catch (const CaseFileError& e) {
    std::fprintf(stderr, "case_file_fuzzer: an accepted case does not read back: %s\n", e.what());
    __builtin_trap();
  }
  if (case_to_json(back) != written) {
    std::fprintf(stderr, "case_file_fuzzer: an accepted case changes on a round trip\n");
    __builtin_trap();
  }
  return 0;
}
