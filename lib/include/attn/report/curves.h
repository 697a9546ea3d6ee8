#pragma once
/// Training curves (`attn plot`): runs' metrics.jsonl drawn as one self-contained SVG, two panels
/// side by side, runs overlaid in colours: the loss per epoch (training solid, validation dashed) and
/// the main metric (validation mean AUC, else exact match, else accuracy with training solid and
/// validation dashed). The best epoch of each run (early stopping's "best") is ringed.
#include <string>
#include <vector>

namespace attn::report {

/// Reads RUN_DIR/metrics.jsonl of each run; errors (std::runtime_error) name the file and line.
std::string training_curves_svg(const std::vector<std::string>& run_dirs);

}  // namespace attn::report
