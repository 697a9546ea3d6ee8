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
  if (to.deobfuscate) tj["deobfuscate"] = true;
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
using SpecKind = InputSpec::Kind;

/// Keras Tokenizer's arguments as inputs.
struct TokenizerInputs {
  Given<std::int64_t> num_words;
  Given<std::string> oov_token;
  Given<bool> no_lower, char_level;
  Given<std::string> filters, split;
  Given<bool> deobfuscate;
};

// (the tables read best as written)
// clang-format off
const std::vector<Field<TokenizerInputs>>& tokenizer_fields() {
  using T = TokenizerInputs;
  static const std::vector<Field<T>> table = {
      {{"num-words", "Keep word indices below N, i.e. the N-1 most frequent words; 0 = all", "20000", SpecKind::kValue, kTokenizerGroup},
       &T::num_words},
      {{"oov-token", "Word given index 1 and used for unknown / cut words (default: none, they are dropped)", "", SpecKind::kValue,
        kTokenizerGroup}, &T::oov_token},
      {{"no-lower", "Do not lowercase (Keras lower=False)", "", SpecKind::kFlag, kTokenizerGroup}, &T::no_lower},
      {{"char-level", "Every character is a token (Keras char_level=True)", "", SpecKind::kFlag, kTokenizerGroup}, &T::char_level},
      {{"filters", "Characters replaced by the separator (default: Keras' ASCII punctuation except ', TAB, LF)", "", SpecKind::kValue,
        kTokenizerGroup}, &T::filters},
      {{"split", "Separator string (default: one space)", "", SpecKind::kValue, kTokenizerGroup}, &T::split},
      {{"deobfuscate", "Read texts through attn's normaliser first: invisible characters, look-alike letters, st.upid, id1ot, "
        "stuuupid, s t u p i d undone; once fitted, its vocabulary reads stu pid, st-upid, st*pid, stpd and stupidzq as stupid (not Keras': "
        "a model keeps it in its config)",
        "", SpecKind::kFlag, kTokenizerGroup},
       &T::deobfuscate},
  };
  return table;
}

/// Keras pad_sequences' arguments as inputs.
struct PaddingInputs {
  Given<std::int64_t> maxlen;
  Given<std::string> padding, truncating;
};

std::vector<Field<PaddingInputs>> padding_fields(const std::string& default_maxlen) {
  using T = PaddingInputs;
  return {
      {{"maxlen", default_maxlen.empty() ? "Pad / truncate every row to N ids (default: no padding)" : "Pad / truncate every row to N ids",
        default_maxlen, SpecKind::kValue, kPaddingGroup}, &T::maxlen},
      {{"padding", "Where padding goes: pre (left) or post (right)", "pre", SpecKind::kValue, kPaddingGroup}, &T::padding},
      {{"truncating", "Which end long rows lose: pre (keep the end) or post (keep the start)", "pre", SpecKind::kValue, kPaddingGroup},
       &T::truncating},
  };
}

/// `attn prepare`'s own inputs: the file and its columns.
struct PrepareInputs {
  Given<std::string> csv, text_column;
  Given<std::vector<std::string>> labels;
  Given<std::string> label_column;
  Given<std::vector<std::string>> classes;
  Given<double> target_threshold;
  Given<std::string> format, id_column, tokenizer;
};

const std::vector<Field<PrepareInputs>>& prepare_fields() {
  using T = PrepareInputs;
  static const std::vector<Field<T>> table = {
      {{"csv", "CSV file with a header row (Kaggle layout)", ""}, &T::csv},
      {{"text-column", "Column holding the text", "comment_text"}, &T::text_column},
      {{"labels", "Comma-separated 0/1 label columns ('' for none)", "toxic,severe_toxic,obscene,threat,insult,identity_hate"}, &T::labels},
      {label_column_input(), &T::label_column},
      {{"classes", "With --label-column: the classes in their order, c1,c2,... (default: the file's values, sorted)", ""}, &T::classes},
      {{"target-threshold",
        "The label columns hold fractions in [0, 1] (Civil Comments' target: the share of raters): a row is positive at >= T (0.5 as "
        "Jigsaw 2019)",
        ""}, &T::target_threshold},
      {{"format", "The file's format: csv, tsv (tab-separated, no quoting) or jsonl (default: from its extension)", ""}, &T::format},
      {{"id-column", "Column holding row ids (row numbers are used when the default is absent)", "id"}, &T::id_column},
      {{"tokenizer", "Apply this fitted tokenizer.json instead of fitting one (label columns become optional)", ""}, &T::tokenizer},
  };
  return table;
}
// clang-format on

}  // namespace

std::vector<InputSpec> tokenizer_inputs() { return specs_of(tokenizer_fields()); }

text::TokenizerOptions tokenizer_options(const Inputs& in) {
  const TokenizerInputs t = read_fields(in, tokenizer_fields());
  text::TokenizerOptions o;
  if (t.num_words.value < 0) throw std::invalid_argument("--num-words must be >= 0, got " + std::to_string(t.num_words.value));
  o.num_words = t.num_words.value;
  if (t.oov_token.given) o.oov_token = t.oov_token.value;
  o.lower = !t.no_lower.value;
  o.char_level = t.char_level.value;
  if (t.filters.given) o.filters = t.filters.value;
  if (t.split.given) o.split = t.split.value;
  if (o.split.empty()) throw std::invalid_argument("--split must not be empty");
  o.deobfuscate = t.deobfuscate.value;
  return o;
}

std::vector<InputSpec> padding_inputs(const std::string& default_maxlen) { return specs_of(padding_fields(default_maxlen)); }

text::PadOptions padding_options(const Inputs& in) {
  const PaddingInputs p = read_fields(in, padding_fields(""));
  text::PadOptions o;
  if (!p.maxlen.text.empty()) {  // given or defaulted (a bad value failed above)
    if (p.maxlen.value < 1) throw std::invalid_argument("--maxlen must be >= 1, got " + std::to_string(p.maxlen.value));
    o.maxlen = p.maxlen.value;
  }
  o.padding = text::parse_side(p.padding.value, "--padding");
  o.truncating = text::parse_side(p.truncating.value, "--truncating");
  return o;
}

std::vector<InputSpec> prepare_inputs() {
  std::vector<InputSpec> specs = specs_of(prepare_fields());
  for (auto& list : {tokenizer_inputs(), padding_inputs("200")}) specs.insert(specs.end(), list.begin(), list.end());
  return specs;
}

PrepareOptions prepare_options(const Inputs& in, int threads) {
  const PrepareInputs p = read_fields(in, prepare_fields());
  PrepareOptions o;
  if (!p.csv.given && p.csv.text.empty()) throw std::invalid_argument("--csv is required");
  o.csv = p.csv.value;
  o.threads = threads;
  o.pad = padding_options(in);
  if (p.tokenizer.given) {
    const TokenizerInputs set = read_fields(in, tokenizer_fields());
    for (const Field<TokenizerInputs>& f : tokenizer_fields())
      if (std::visit([&](auto member) { return (set.*member).given; }, f.into))
        throw std::invalid_argument("tokenizer settings come from --tokenizer; drop --" + f.spec.name);
    o.apply_tokenizer = p.tokenizer.value;
  }
  o.tokenizer = tokenizer_options(in);  // validated even when unused
  o.columns.text_column = p.text_column.value;
  o.columns.label_columns = p.labels.value;
  o.columns.labels_optional = !o.apply_tokenizer.empty() && !p.labels.given;
  if (p.label_column.given) {  // one class per row
    if (p.labels.given) throw std::invalid_argument("give --labels (0/1 columns) or --label-column (one class per row), not both");
    o.columns.class_column = p.label_column.value;
    if (o.columns.class_column.empty()) throw std::invalid_argument("--label-column must name a column");
    o.columns.label_columns.clear();
    o.columns.labels_optional = false;
  }
  if (p.classes.given) {
    if (!p.label_column.given) throw std::invalid_argument("--classes needs --label-column (the column holding each row's class)");
    o.columns.classes = text::parse_classes(p.classes.value, "--classes");
  }
  if (p.target_threshold.given) {
    if (p.label_column.given) throw std::invalid_argument("--target-threshold binarises 0/1 label columns (--labels), not a class");
    const double t = p.target_threshold.value;
    if (!(t > 0 && t <= 1)) throw std::invalid_argument("--target-threshold must be in (0, 1], got '" + p.target_threshold.text + "'");
    o.columns.target_threshold = t;
  }
  if (p.format.given) o.columns.format = text::parse_table_format(p.format.value, "--format");
  o.columns.id_column = p.id_column.value;
  o.columns.id_required = p.id_column.given;
  return o;
}

}  // namespace attn::data
