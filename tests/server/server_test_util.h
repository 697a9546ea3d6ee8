#pragma once
// Helpers the server's tests share: a small model file to serve.
#include <cstdint>
#include <string>
#include <vector>

#include "../tasks/tasks_test_util.h"

namespace server_test {

/// A feature-attention model file (untrained, weights from `seed`) in DIR/model.pt; returns DIR.
inline std::string feature_model(const tasks_test::fs::path& dir, std::uint64_t seed = 1) {
  std::vector<std::string> rows;
  for (int i = 0; i < 60; ++i)
    rows.push_back(std::to_string(i % 7 * 0.1) + "," + std::to_string(i % 5 * 0.1) + "," + (i % 7 > i % 5 ? "1" : "0"));
  tasks_test::fs::create_directories(dir);
  const std::string csv = tasks_test::write_csv(dir / "rows.csv", "a,b,label", rows);
  return tasks_test::saved_model("feature-attention", dir, {{"csv", csv}}, nlohmann::json::object(), seed);
}

}  // namespace server_test
