#include "attn/data/prepare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <stdexcept>

#include "attn/io/atomic_file.h"
#include "attn/text/unicode.h"

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

/// The tokenizer to fit (a new one with the options' settings) or to apply (the one given, or read from its file).
text::Tokenizer starting_tokenizer(const PrepareOptions& o, bool fitting) {
  return fitting                    ? text::Tokenizer(o.tokenizer)
         : o.apply_loaded_tokenizer ? *o.apply_loaded_tokenizer
                                    : text::Tokenizer::from_json(io::read_file(o.apply_tokenizer), o.apply_tokenizer);
}

/// Reads the CSV in blocks: their ids and labels into `data`, their texts into `stream` (whose workers tokenise them meanwhile).
text::TextColumns read_csv_rows(const PrepareOptions& o, io::PreparedData& data, text::Tokenizer::Stream& stream) {
  return text::read_text_csv_blocks(o.csv, o.columns, 2048, [&](text::TextBlock&& block) {
    data.ids.insert(data.ids.end(), std::make_move_iterator(block.ids.begin()), std::make_move_iterator(block.ids.end()));
    data.labels.insert(data.labels.end(), block.labels.begin(), block.labels.end());
    stream.add(std::move(block.texts));
  });
}

/// The report's "tokenizer" section: where the tokenizer came from, its settings and its vocabulary's size.
nlohmann::ordered_json tokenizer_report(const PrepareOptions& o, bool fitting, const text::Tokenizer& tokenizer) {
  const auto& to = tokenizer.options();
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
  return tj;
}

/// The report's "tokens" section: tokens split, emitted, dropped or mapped to the OOV index, and cut by maxlen.
nlohmann::ordered_json token_report(const text::TransformStats& stats, const text::TokenizerOptions& to, std::int64_t truncated_tokens) {
  return {{"total", stats.tokens},
          {"emitted", stats.emitted},
          {"dropped_by_num_words", to.oov_token ? 0 : stats.beyond_num_words},
          {"mapped_to_oov", to.oov_token ? stats.beyond_num_words + stats.unknown : 0},
          {"beyond_num_words", stats.beyond_num_words},
          {"unknown", stats.unknown},
          {"truncated_by_maxlen", truncated_tokens}};
}

/// The share of rows with each label set to 1, by label name.
nlohmann::ordered_json label_positive_rates(const io::PreparedData& data) {
  nlohmann::ordered_json rates;
  const std::size_t L = data.label_names.size();
  for (std::size_t k = 0; k < L; ++k) {
    double pos = 0;
    for (std::int64_t i = 0; i < data.x.rows; ++i) pos += data.labels[static_cast<std::size_t>(i) * L + k];
    rates[data.label_names[k]] = data.x.rows ? pos / static_cast<double>(data.x.rows) : 0.0;
  }
  return rates;
}

}  // namespace

Prepared prepare_csv(const PrepareOptions& o) {
  const bool fitting = o.apply_tokenizer.empty() && !o.apply_loaded_tokenizer;
  // Read the CSV on this thread while the tokenizer's workers tokenise the blocks already read.
  const auto t0 = std::chrono::steady_clock::now();
  Prepared out{io::PreparedData{}, text::SequenceBatch{}, o.pad, o.threads, starting_tokenizer(o, fitting), {}, nlohmann::ordered_json{}};
  text::Tokenizer& tokenizer = out.tokenizer;
  io::PreparedData& data = out.data;
  text::Tokenizer::Stream stream = fitting ? tokenizer.fit_stream(o.threads) : tokenizer.transform_stream(o.threads);
  const text::TextColumns columns = read_csv_rows(o, data, stream);
  const double read_s = seconds_since(t0);
  if (data.ids.empty()) throw std::runtime_error(o.csv + ": no data rows (only a header)");
  text::TransformStats stats;
  // A fitted tokenizer is saved: its JSON (25 MB for a Jigsaw-sized vocabulary) is made on another
  // thread, from a copy (a few milliseconds: its tables are flat arrays) that lives as long as
  // that thread needs it, while this one finishes the rows, pads and writes data.pt.
  text::SequenceBatch seqs = stream.finish(&stats, [&] {
    auto fitted = std::make_shared<const text::Tokenizer>(tokenizer);
    out.tokenizer_json = std::async(std::launch::async, [fitted] { return fitted->to_json(); }).share();
  });
  const double tokenize_s = seconds_since(t0) - read_s;

  const auto t2 = std::chrono::steady_clock::now();
  data.x =
      o.pad_in_memory ? text::pad_sequences(seqs, o.pad, fitting ? std::max(1, o.threads - 1) : o.threads) : text::pad_shape(seqs, o.pad);
  data.label_names = columns.label_names;
  data.padding = o.pad.padding;
  const double pad_s = seconds_since(t2);

  nlohmann::ordered_json& report = out.report;
  report["format"] = "attn.prepare/1";
  report["csv"] = o.csv;
  report["rows"] = data.x.rows;
  report["text_column"] = o.columns.text_column;
  report["id_column"] = columns.ids_are_row_numbers ? nlohmann::ordered_json() : nlohmann::ordered_json(o.columns.id_column);
  report["labels"] = data.label_names;
  if (o.columns.target_threshold > 0) report["target_threshold"] = o.columns.target_threshold;
  if (!o.columns.class_column.empty()) report["label_column"] = o.columns.class_column;  // one class per row: labels are the classes
  report["tokenizer"] = tokenizer_report(o, fitting, tokenizer);
  report["padding"] = {{"maxlen", data.x.cols},
                       {"padding", text::side_name(o.pad.padding)},
                       {"truncating", text::side_name(o.pad.truncating)},
                       {"value", o.pad.value}};
  report["tokens"] = token_report(stats, tokenizer.options(), data.x.truncated_tokens);
  report["sequence_lengths"] = length_report(seqs);
  if (!data.label_names.empty()) report["label_positive_rate"] = label_positive_rates(data);
  report["threads"] = o.threads;
  if (!o.pad_in_memory) out.sequences = std::move(seqs);
  report["seconds"] = {
      {"read_csv_while_tokenizing", read_s}, {"finish_tokenizing", tokenize_s}, {"pad", pad_s}, {"total", seconds_since(t0)}};
  return out;
}

void write_prepared_dir(const Prepared& p, const std::string& dir) {
  // data.pt on this thread, tokenizer.json on another (both take a while at 160k rows).
  const auto t0 = std::chrono::steady_clock::now();
  io::ensure_directory(dir);
  io::StagedFiles files;
  // Both staged before the other thread starts: write() reads the staged set, which stage() changes.
  const std::string tokenizer_path = files.stage(dir + "/tokenizer.json");
  const std::string data_path = files.stage(dir + "/data.pt");
  auto tokenizer_written = std::async(
      std::launch::async, [&] { files.write(tokenizer_path, p.tokenizer_json.valid() ? p.tokenizer_json.get() : p.tokenizer.to_json()); });
  io::write_prepared(data_path, p.data, p.threads, [&p](std::int64_t first, std::int64_t count, std::int32_t* out) {
    text::pad_rows_into(p.sequences, p.pad, p.data.x.cols, first, count, out);
  });
  tokenizer_written.get();
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
                tokens["total"].get<long long>(), tokens["emitted"].get<long long>(), tokens["beyond_num_words"].get<long long>(),
                tokens["unknown"].get<long long>(), to.oov_token ? " (both as the OOV index)" : " (both dropped)",
                tokens["truncated_by_maxlen"].get<long long>());
  s += buf;
  std::snprintf(buf, sizeof buf, "  lengths    mean %.1f, median %.0f, p95 %.0f, max %lld; %lld empty rows\n",
                lengths["mean"].get<double>(), lengths["p50"].get<double>(), lengths["p95"].get<double>(), lengths["max"].get<long long>(),
                lengths["empty_rows"].get<long long>());
  s += buf;
  return s;
}

}  // namespace attn::data

namespace attn::data {

std::string tokenize(const TokenizeRequest& r, const std::function<std::vector<std::string>()>& stdin_lines) {
  const auto tokenizer = text::Tokenizer::from_json(io::read_file(r.tokenizer), r.tokenizer);
  std::vector<std::string> texts;
  if (!r.csv.empty()) {
    text::TextCsvOptions o;
    o.text_column = r.text_column;
    o.label_columns.clear();
    o.id_column.clear();
    text::read_text_csv_blocks(r.csv, o, 4096, [&](text::TextBlock&& b) {
      for (std::size_t i = 0; i < b.texts.size(); ++i) texts.emplace_back(b.texts[i]);
    });
  } else {
    texts = stdin_lines();  // only the '\n' is stripped: a '\r' stays part of the text, as in Keras
    for (std::size_t n = 0; n < texts.size(); ++n) {
      const std::size_t bad = text::find_invalid_utf8(texts[n]);
      if (bad != std::string::npos)
        throw std::runtime_error("stdin:" + std::to_string(n + 1) + ": invalid UTF-8 at byte offset " + std::to_string(bad));
    }
  }
  const std::vector<text::Sequence> seqs = tokenizer.texts_to_sequences(texts, r.threads);
  std::string out;
  const auto print_row = [&out](const std::int32_t* ids, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      if (i) out += ' ';
      out += std::to_string(ids[i]);
    }
    out += '\n';
  };
  if (r.pad.maxlen) {
    const text::PaddedSequences p = text::pad_sequences(seqs, r.pad);
    for (std::int64_t row = 0; row < p.rows; ++row) print_row(p.ids.data() + row * p.cols, static_cast<std::size_t>(p.cols));
  } else {
    for (const auto& seq : seqs) print_row(seq.data(), seq.size());
  }
  return out;
}

namespace {
const char* kTokenizerGroup = "Tokenizer (Keras Tokenizer arguments)";
const char* kPaddingGroup = "Padding (Keras pad_sequences arguments)";
}  // namespace

std::vector<InputSpec> tokenizer_inputs() {
  using K = InputSpec::Kind;
  return {
      {"num-words", "Keep word indices below N, i.e. the N-1 most frequent words; 0 = all", "20000", K::kValue, kTokenizerGroup},
      {"oov-token", "Word given index 1 and used for unknown / cut words (default: none, they are dropped)", "", K::kValue,
       kTokenizerGroup},
      {"no-lower", "Do not lowercase (Keras lower=False)", "", K::kFlag, kTokenizerGroup},
      {"char-level", "Every character is a token (Keras char_level=True)", "", K::kFlag, kTokenizerGroup},
      {"filters", "Characters replaced by the separator (default: Keras' ASCII punctuation except ', TAB, LF)", "", K::kValue,
       kTokenizerGroup},
      {"split", "Separator string (default: one space)", "", K::kValue, kTokenizerGroup},
  };
}

text::TokenizerOptions tokenizer_options(const Inputs& in) {
  text::TokenizerOptions o;
  const std::int64_t n = in.integer("num-words");
  if (n < 0) throw std::invalid_argument("--num-words must be >= 0, got " + std::to_string(n));
  o.num_words = n;
  if (in.given("oov-token")) o.oov_token = in.text("oov-token");
  o.lower = !in.flag("no-lower");
  o.char_level = in.flag("char-level");
  if (in.given("filters")) o.filters = in.text("filters");
  if (in.given("split")) o.split = in.text("split");
  if (o.split.empty()) throw std::invalid_argument("--split must not be empty");
  return o;
}

std::vector<InputSpec> padding_inputs(const std::string& default_maxlen) {
  using K = InputSpec::Kind;
  return {
      {"maxlen", default_maxlen.empty() ? "Pad / truncate every row to N ids (default: no padding)" : "Pad / truncate every row to N ids",
       default_maxlen, K::kValue, kPaddingGroup},
      {"padding", "Where padding goes: pre (left) or post (right)", "pre", K::kValue, kPaddingGroup},
      {"truncating", "Which end long rows lose: pre (keep the end) or post (keep the start)", "pre", K::kValue, kPaddingGroup},
  };
}

text::PadOptions padding_options(const Inputs& in) {
  text::PadOptions o;
  if (in.get("maxlen")) {
    const std::int64_t n = in.integer("maxlen");
    if (n < 1) throw std::invalid_argument("--maxlen must be >= 1, got " + std::to_string(n));
    o.maxlen = n;
  }
  o.padding = text::parse_side(in.text("padding"), "--padding");
  o.truncating = text::parse_side(in.text("truncating"), "--truncating");
  return o;
}

std::vector<InputSpec> prepare_inputs() {
  std::vector<InputSpec> specs = {
      {"csv", "CSV file with a header row (Kaggle layout)", ""},
      {"text-column", "Column holding the text", "comment_text"},
      {"labels", "Comma-separated 0/1 label columns ('' for none)", "toxic,severe_toxic,obscene,threat,insult,identity_hate"},
      label_column_input(),
      {"classes", "With --label-column: the classes in their order, c1,c2,... (default: the file's values, sorted)", ""},
      {"target-threshold",
       "The label columns hold fractions in [0, 1] (Civil Comments' target: the share of raters): a row is positive at >= T (0.5 as "
       "Jigsaw 2019)",
       ""},
      {"format", "The file's format: csv, tsv (tab-separated, no quoting) or jsonl (default: from its extension)", ""},
      {"id-column", "Column holding row ids (row numbers are used when the default is absent)", "id"},
      {"tokenizer", "Apply this fitted tokenizer.json instead of fitting one (label columns become optional)", ""},
  };
  for (auto& list : {tokenizer_inputs(), padding_inputs("200")}) specs.insert(specs.end(), list.begin(), list.end());
  return specs;
}

PrepareOptions prepare_options(const Inputs& in, int threads) {
  PrepareOptions o;
  o.csv = in.text("csv");
  o.threads = threads;
  o.pad = padding_options(in);
  const auto tokenizer_set = tokenizer_inputs();
  if (in.given("tokenizer")) {
    for (const InputSpec& s : tokenizer_set)
      if (in.given(s.name)) throw std::invalid_argument("tokenizer settings come from --tokenizer; drop --" + s.name);
    o.apply_tokenizer = in.text("tokenizer");
  }
  o.tokenizer = tokenizer_options(in);  // validated even when unused
  o.columns.text_column = in.text("text-column");
  o.columns.label_columns = in.list("labels");
  o.columns.labels_optional = !o.apply_tokenizer.empty() && !in.given("labels");
  if (in.given("label-column")) {  // one class per row
    if (in.given("labels")) throw std::invalid_argument("give --labels (0/1 columns) or --label-column (one class per row), not both");
    o.columns.class_column = in.text("label-column");
    if (o.columns.class_column.empty()) throw std::invalid_argument("--label-column must name a column");
    o.columns.label_columns.clear();
    o.columns.labels_optional = false;
  }
  if (in.given("classes")) {
    if (!in.given("label-column")) throw std::invalid_argument("--classes needs --label-column (the column holding each row's class)");
    o.columns.classes = text::parse_classes(in.list("classes"), "--classes");
  }
  if (in.given("target-threshold")) {
    if (in.given("label-column")) throw std::invalid_argument("--target-threshold binarises 0/1 label columns (--labels), not a class");
    const double t = in.number("target-threshold");
    if (!(t > 0 && t <= 1)) throw std::invalid_argument("--target-threshold must be in (0, 1], got '" + in.text("target-threshold") + "'");
    o.columns.target_threshold = t;
  }
  if (in.given("format")) o.columns.format = text::parse_table_format(in.text("format"), "--format");
  o.columns.id_column = in.text("id-column");
  o.columns.id_required = in.given("id-column");
  return o;
}

}  // namespace attn::data
