// Training curves: both panels, every run, the best epoch ringed; a missing run is named.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "attn/report/curves.h"

using namespace attn;
namespace fs = std::filesystem;

TEST_CASE("training curves: loss and the main metric per epoch, runs overlaid", "[report][curves]") {
  const fs::path dir = fs::temp_directory_path() / ("attn_curves_" + std::to_string(::getpid()));
  fs::create_directories(dir / "alpha");
  fs::create_directories(dir / "beta");
  std::ofstream(dir / "alpha" / "metrics.jsonl")
      << R"({"epoch":1,"loss":0.7,"accuracy":0.5,"val_loss":0.6,"val_mean_auc":0.7,"best":true})"
      << "\n"
      << R"({"epoch":2,"loss":0.5,"accuracy":0.7,"val_loss":0.65,"val_mean_auc":0.75,"best":false})"
      << "\n";
  std::ofstream(dir / "beta" / "metrics.jsonl") << R"({"epoch":1,"loss":0.9,"accuracy":0.4,"val_loss":0.8,"val_mean_auc":0.6,"best":true})"
                                                << "\n";
  const std::string svg = report::training_curves_svg({(dir / "alpha").string(), (dir / "beta").string()});
  CHECK_THAT(svg, Catch::StartsWith("<svg") && Catch::Contains(">alpha<") && Catch::Contains(">beta<") && Catch::Contains("val_mean_auc") &&
                      Catch::Contains("loss (training solid, validation dashed)"));
  CHECK(std::count(svg.begin(), svg.end(), '\n') > 20);
  CHECK_THAT(svg, Catch::Contains("stroke-dasharray") && Catch::Contains("<title>epoch 2: 0.65</title>"));
  CHECK_THAT(svg, Catch::Contains("r=\"5\""));  // alpha's epoch 1 was the best
  CHECK_THROWS_WITH(report::training_curves_svg({(dir / "missing").string()}), Catch::Contains("missing/metrics.jsonl: cannot open"));
  fs::remove_all(dir);
}
