// attn prepare: CSV -> Keras-exact tokenizer.json, padded ids (data.pt) and a report (prepare.json).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "../common/app.h"
#include "attn/io/atomic_file.h"
#include "attn/io/prepared_data.h"
#include "attn/text/dataset.h"

namespace attn::apps {
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

int run(int argc, char** argv) {
  cxxopts::Options options("attn prepare",
                           "Fit a Keras-exact tokenizer on a CSV's text column (or apply a fitted one) and write\n"
                           "DIR/tokenizer.json (Keras format), DIR/data.pt (padded ids, lengths, labels, ids;\n"
                           "torch.load-able) and DIR/prepare.json (settings and statistics).");
  options.add_options("Input")
      ("csv", "CSV file with a header row (Kaggle layout)", cxxopts::value<std::string>())
      ("text-column", "Column holding the text", cxxopts::value<std::string>()->default_value("comment_text"))
      ("labels", "Comma-separated 0/1 label columns ('' for none)",
       cxxopts::value<std::string>()->default_value("toxic,severe_toxic,obscene,threat,insult,identity_hate"))
      ("id-column", "Column holding row ids (row numbers are used when the default is absent)",
       cxxopts::value<std::string>()->default_value("id"))
      ("tokenizer", "Apply this fitted tokenizer.json instead of fitting one (label columns become optional)",
       cxxopts::value<std::string>());
  options.add_options("Output")("out", "Output directory (created if missing)", cxxopts::value<std::string>());
  add_tokenizer_options(options);
  add_padding_options(options, "200");
  add_threads_option(options);
  const auto parsed = parse_or_help(options, argc, argv);
  if (!parsed) return kExitOk;
  const auto& r = *parsed;

  const auto csv_path = required<std::string>(r, "csv");
  const auto out_dir = required<std::string>(r, "out");
  const int threads = threads_option(r);
  const text::PadOptions pad = padding_options(r);
  const bool fitting = !r.count("tokenizer");
  if (!fitting && any_tokenizer_option(r))
    throw UsageError("tokenizer settings come from --tokenizer; drop --num-words/--oov-token/--no-lower/...");
  const text::TokenizerOptions tok_options = tokenizer_options(r);  // validates even when unused

  text::TextCsvOptions csv_options;
  csv_options.text_column = r["text-column"].as<std::string>();
  csv_options.label_columns = split_list(r["labels"].as<std::string>());
  csv_options.labels_optional = !fitting && !r.count("labels");
  csv_options.id_column = r["id-column"].as<std::string>();
  csv_options.id_required = r.count("id-column") > 0;

  // Read the CSV on this thread while the tokenizer's workers tokenise the blocks already read.
  const auto t0 = std::chrono::steady_clock::now();
  text::Tokenizer tokenizer = fitting ? text::Tokenizer(tok_options)
                                      : text::Tokenizer::from_json(io::read_file(r["tokenizer"].as<std::string>()),
                                                                   r["tokenizer"].as<std::string>());
  text::Tokenizer::Stream stream = fitting ? tokenizer.fit_stream(threads) : tokenizer.transform_stream(threads);
  io::PreparedData data;
  const text::TextColumns columns =
      text::read_text_csv_blocks(csv_path, csv_options, 2048, [&](text::TextBlock&& block) {
        data.ids.insert(data.ids.end(), std::make_move_iterator(block.ids.begin()), std::make_move_iterator(block.ids.end()));
        data.labels.insert(data.labels.end(), block.labels.begin(), block.labels.end());
        stream.add(std::move(block.texts));
      });
  const double read_s = seconds_since(t0);
  text::TransformStats stats;
  const text::SequenceBatch seqs = stream.finish(&stats);
  const double tokenize_s = seconds_since(t0) - read_s;

  const auto t2 = std::chrono::steady_clock::now();
  data.x = text::pad_sequences(seqs, pad, threads);
  data.label_names = columns.label_names;
  const double pad_s = seconds_since(t2);

  // Write data.pt while another thread serialises the tokenizer (both take a while at 160k rows).
  const auto t3 = std::chrono::steady_clock::now();
  io::ensure_directory(out_dir);
  io::StagedFiles files;
  auto tokenizer_json = std::async(std::launch::async, [&] { return tokenizer.to_json(); });
  io::write_prepared(files.stage(out_dir + "/data.pt"), data);
  files.add(out_dir + "/tokenizer.json", tokenizer_json.get());

  const auto& to = tokenizer.options();
  nlohmann::ordered_json report;
  report["format"] = "attn.prepare/1";
  report["csv"] = csv_path;
  report["rows"] = data.x.rows;
  report["text_column"] = csv_options.text_column;
  report["id_column"] = columns.ids_are_row_numbers ? nlohmann::ordered_json() : nlohmann::ordered_json(csv_options.id_column);
  report["labels"] = data.label_names;
  nlohmann::ordered_json tj;
  tj["fitted_here"] = fitting;
  tj["source"] = fitting ? csv_path : r["tokenizer"].as<std::string>();
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
                       {"padding", text::side_name(pad.padding)},
                       {"truncating", text::side_name(pad.truncating)},
                       {"value", pad.value}};
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
  report["threads"] = threads;

  const double write_s = seconds_since(t3);
  report["seconds"] = {{"read_csv_while_tokenizing", read_s}, {"finish_tokenizing", tokenize_s}, {"pad", pad_s}, {"write", write_s},
                       {"total", seconds_since(t0)}};
  files.add(out_dir + "/prepare.json", report.dump(2) + "\n");
  files.commit();

  const auto& lengths = report["sequence_lengths"];
  std::printf("prepared %lld rows of %s in %.3f s (%d threads)\n", static_cast<long long>(data.x.rows), csv_path.c_str(),
              seconds_since(t0), threads);
  std::printf("  tokenizer  %s: %d distinct words%s\n", fitting ? "fitted here" : "loaded", tokenizer.vocabulary_size(),
              to.num_words && *to.num_words ? (", indices below " + std::to_string(*to.num_words) + " kept").c_str() : "");
  std::printf("  tokens     %lld in all: %lld emitted, %lld beyond num_words, %lld unknown%s; %lld cut by maxlen\n",
              static_cast<long long>(stats.tokens), static_cast<long long>(stats.emitted),
              static_cast<long long>(stats.beyond_num_words), static_cast<long long>(stats.unknown),
              to.oov_token ? " (both as the OOV index)" : " (both dropped)", static_cast<long long>(data.x.truncated_tokens));
  std::printf("  lengths    mean %.1f, median %.0f, p95 %.0f, max %lld; %lld empty rows\n", lengths["mean"].get<double>(),
              lengths["p50"].get<double>(), lengths["p95"].get<double>(), lengths["max"].get<long long>(),
              lengths["empty_rows"].get<long long>());
  std::printf("  wrote      %s/{tokenizer.json, data.pt, prepare.json}: [%lld, %lld] ids, %zu labels\n", out_dir.c_str(),
              static_cast<long long>(data.x.rows), static_cast<long long>(data.x.cols), data.label_names.size());
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) {
  return attn::apps::guarded("attn prepare", [&] { return attn::apps::run(argc, argv); });
}
