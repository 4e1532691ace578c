// A temporary directory for one unit test, removed afterwards.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

struct TestDir {
  std::string path;
  TestDir() {
    char tmpl[] = "/tmp/rewind-unit.XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TestDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};
