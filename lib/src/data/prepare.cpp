#include "attn/data/prepare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>

#include "attn/io/atomic_file.h"

namespace attn::data {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// numpy.percentile's default (linear interpolation) over sorted values.
double percentile(const std::vector<std::int64_t>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double pos = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return static_cast<double>(sorted[lo]) + (pos - static_cast<double>(lo)) * static_cast<double>(sorted[hi] - sorted[lo]);
}

nlohmann::ordered_json length_report(const text::SequenceBatch& seqs) {
  std::vector<std::int64_t> lengths;
  lengths.reserve(seqs.size());
  double sum = 0;
  std::int64_t empty = 0;
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    lengths.push_back(seqs.length(i));
    sum += static_cast<double>(seqs.length(i));
    empty += seqs.length(i) == 0;
  }
  std::sort(lengths.begin(), lengths.end());
  nlohmann::ordered_json j;
  j["mean"] = lengths.empty() ? 0.0 : sum / static_cast<double>(lengths.size());
  for (int q : {50, 90, 95, 99}) j["p" + std::to_string(q)] = percentile(lengths, q);
  j["max"] = lengths.empty() ? 0 : lengths.back();
  j["empty_rows"] = empty;
  return j;
}

}  // namespace

Prepared prepare_csv(const PrepareOptions& o) {
  const bool fitting = o.apply_tokenizer.empty() && !o.apply_loaded_tokenizer;
  // Read the CSV on this thread while the tokenizer's workers tokenise the blocks already read.
  const auto t0 = std::chrono::steady_clock::now();
  Prepared out{io::PreparedData{},
               fitting                     ? text::Tokenizer(o.tokenizer)
               : o.apply_loaded_tokenizer ? *o.apply_loaded_tokenizer
                                           : text::Tokenizer::from_json(io::read_file(o.apply_tokenizer), o.apply_tokenizer),
               nlohmann::ordered_json{}};
  text::Tokenizer& tokenizer = out.tokenizer;
  io::PreparedData& data = out.data;
  text::Tokenizer::Stream stream = fitting ? tokenizer.fit_stream(o.threads) : tokenizer.transform_stream(o.threads);
  const text::TextColumns columns =
      text::read_text_csv_blocks(o.csv, o.columns, 2048, [&](text::TextBlock&& block) {
        data.ids.insert(data.ids.end(), std::make_move_iterator(block.ids.begin()), std::make_move_iterator(block.ids.end()));
        data.labels.insert(data.labels.end(), block.labels.begin(), block.labels.end());
        stream.add(std::move(block.texts));
      });
  const double read_s = seconds_since(t0);
  text::TransformStats stats;
  const text::SequenceBatch seqs = stream.finish(&stats);
  const double tokenize_s = seconds_since(t0) - read_s;

  const auto t2 = std::chrono::steady_clock::now();
  data.x = text::pad_sequences(seqs, o.pad, o.threads);
  data.label_names = columns.label_names;
  data.padding = o.pad.padding;
  const double pad_s = seconds_since(t2);

  const auto& to = tokenizer.options();
  nlohmann::ordered_json& report = out.report;
  report["format"] = "attn.prepare/1";
  report["csv"] = o.csv;
  report["rows"] = data.x.rows;
  report["text_column"] = o.columns.text_column;
  report["id_column"] = columns.ids_are_row_numbers ? nlohmann::ordered_json() : nlohmann::ordered_json(o.columns.id_column);
  report["labels"] = data.label_names;
  nlohmann::ordered_json tj;
  tj["fitted_here"] = fitting;
  tj["source"] = fitting ? o.csv : o.apply_loaded_tokenizer ? "(given)" : o.apply_tokenizer;
  tj["num_words"] = to.num_words ? nlohmann::ordered_json(*to.num_words) : nlohmann::ordered_json();
  tj["oov_token"] = to.oov_token ? nlohmann::ordered_json(*to.oov_token) : nlohmann::ordered_json();
  tj["lower"] = to.lower;
  tj["char_level"] = to.char_level;
  tj["split"] = to.split;
  tj["filters"] = to.filters;
  tj["document_count"] = tokenizer.document_count();
  tj["vocabulary_size"] = tokenizer.vocabulary_size();
  report["tokenizer"] = tj;
  report["padding"] = {{"maxlen", data.x.cols},
                       {"padding", text::side_name(o.pad.padding)},
                       {"truncating", text::side_name(o.pad.truncating)},
                       {"value", o.pad.value}};
  report["tokens"] = {{"total", stats.tokens},
                      {"emitted", stats.emitted},
                      {"dropped_by_num_words", to.oov_token ? 0 : stats.beyond_num_words},
                      {"mapped_to_oov", to.oov_token ? stats.beyond_num_words + stats.unknown : 0},
                      {"beyond_num_words", stats.beyond_num_words},
                      {"unknown", stats.unknown},
                      {"truncated_by_maxlen", data.x.truncated_tokens}};
  report["sequence_lengths"] = length_report(seqs);
  if (!data.label_names.empty()) {
    nlohmann::ordered_json rates;
    const std::size_t L = data.label_names.size();
    for (std::size_t k = 0; k < L; ++k) {
      double pos = 0;
      for (std::int64_t i = 0; i < data.x.rows; ++i) pos += data.labels[static_cast<std::size_t>(i) * L + k];
      rates[data.label_names[k]] = data.x.rows ? pos / static_cast<double>(data.x.rows) : 0.0;
    }
    report["label_positive_rate"] = rates;
  }
  report["threads"] = o.threads;
  report["seconds"] = {{"read_csv_while_tokenizing", read_s}, {"finish_tokenizing", tokenize_s}, {"pad", pad_s},
                       {"total", seconds_since(t0)}};
  return out;
}

void write_prepared_dir(const Prepared& p, const std::string& dir) {
  // Write data.pt while another thread serialises the tokenizer (both take a while at 160k rows).
  const auto t0 = std::chrono::steady_clock::now();
  io::ensure_directory(dir);
  io::StagedFiles files;
  auto tokenizer_json = std::async(std::launch::async, [&] { return p.tokenizer.to_json(); });
  io::write_prepared(files.stage(dir + "/data.pt"), p.data);
  files.add(dir + "/tokenizer.json", tokenizer_json.get());
  nlohmann::ordered_json report = p.report;
  report["seconds"]["write"] = seconds_since(t0);
  files.add(dir + "/prepare.json", report.dump(2) + "\n");
  files.commit();
}

std::string summary(const Prepared& p) {
  const auto& r = p.report;
  const auto& lengths = r["sequence_lengths"];
  const auto& tokens = r["tokens"];
  const auto& to = p.tokenizer.options();
  char buf[2048];
  std::string s;
  std::snprintf(buf, sizeof buf, "prepared %lld rows of %s (%d threads)\n", static_cast<long long>(p.data.x.rows),
                r["csv"].get<std::string>().c_str(), r["threads"].get<int>());
  s += buf;
  std::snprintf(buf, sizeof buf, "  tokenizer  %s: %d distinct words%s\n",
                r["tokenizer"]["fitted_here"].get<bool>() ? "fitted here" : "loaded", p.tokenizer.vocabulary_size(),
                to.num_words && *to.num_words ? (", indices below " + std::to_string(*to.num_words) + " kept").c_str() : "");
  s += buf;
  std::snprintf(buf, sizeof buf, "  tokens     %lld in all: %lld emitted, %lld beyond num_words, %lld unknown%s; %lld cut by maxlen\n",
                tokens["total"].get<long long>(), tokens["emitted"].get<long long>(),
                tokens["beyond_num_words"].get<long long>(), tokens["unknown"].get<long long>(),
                to.oov_token ? " (both as the OOV index)" : " (both dropped)", tokens["truncated_by_maxlen"].get<long long>());
  s += buf;
  std::snprintf(buf, sizeof buf, "  lengths    mean %.1f, median %.0f, p95 %.0f, max %lld; %lld empty rows\n",
                lengths["mean"].get<double>(), lengths["p50"].get<double>(), lengths["p95"].get<double>(),
                lengths["max"].get<long long>(), lengths["empty_rows"].get<long long>());
  s += buf;
  return s;
}

}  // namespace attn::data
