// What the report tests share: a fresh temporary folder, a file's text, and checks on text and on thrown messages.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace pacheck::testing {

// An empty folder in the temporary directory, its name holding `name` and the process id.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("pacheck_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' is not in:\n" << text;
}

// The message of the Error `run` throws, or "(nothing thrown)".
template <class Error, class Run>
std::string thrown_message(const Run& run) {
  try {
    run();
  } catch (const Error& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

}  // namespace pacheck::testing
