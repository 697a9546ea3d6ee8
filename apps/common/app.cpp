#include "app.h"

#include <algorithm>
#include <iostream>

#include <thread>

namespace attn::apps {

int guarded(const std::string& command, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << command << ": error: " << e.what() << " (see '" << command << " --help')\n";
    return kExitUsage;
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << command << ": error: " << e.what() << " (see '" << command << " --help')\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << command << ": error: " << e.what() << "\n";
    return kExitFailure;
  }
}

std::optional<cxxopts::ParseResult> parse_or_help(cxxopts::Options& options, int argc, char** argv,
                                                   bool takes_positional) {
  options.add_options("Help")("h,help", "Show this help");
  auto result = options.parse(argc, argv);
  if (result.count("help")) {
    // Groups in a fixed, task-first order (cxxopts would sort them by name).
    std::vector<std::string> order;
    for (const char* g : {"Input", "Model", "Training", "Output", "Tokenizer (Keras Tokenizer arguments)",
                          "Padding (Keras pad_sequences arguments)", "Compute", "Help"})
      for (const std::string& have : options.groups())
        if (have == g) order.push_back(have);
    for (const std::string& have : options.groups())
      if (std::find(order.begin(), order.end(), have) == order.end()) order.push_back(have);
    std::cout << options.help(order) << std::flush;
    return std::nullopt;
  }
  if (!takes_positional && !result.unmatched().empty())
    throw UsageError("unexpected argument '" + result.unmatched().front() + "'");
  return result;
}

int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

void add_threads_option(cxxopts::Options& options) {
  options.add_options("Compute")("threads", "Threads to use (defaults to the number of cores)",
                                 cxxopts::value<int>()->default_value(std::to_string(hardware_threads())));
}

int threads_option(const cxxopts::ParseResult& r) {
  const int n = r["threads"].as<int>();
  if (n < 1) throw UsageError("--threads must be >= 1, got " + std::to_string(n));
  return n;
}

void add_tokenizer_options(cxxopts::Options& options) {
  options.add_options("Tokenizer (Keras Tokenizer arguments)")
      ("num-words", "Keep word indices below N, i.e. the N-1 most frequent words; 0 = all",
       cxxopts::value<std::int64_t>()->default_value("20000"))
      ("oov-token", "Word given index 1 and used for unknown / cut words (default: none, they are dropped)",
       cxxopts::value<std::string>())
      ("no-lower", "Do not lowercase (Keras lower=False)")
      ("char-level", "Every character is a token (Keras char_level=True)")
      ("filters", "Characters replaced by the separator (default: Keras' ASCII punctuation except ', TAB, LF)",
       cxxopts::value<std::string>())
      ("split", "Separator string (default: one space)", cxxopts::value<std::string>());
}

bool any_tokenizer_option(const cxxopts::ParseResult& r) {
  for (const char* k : {"num-words", "oov-token", "no-lower", "char-level", "filters", "split"})
    if (r.count(k)) return true;
  return false;
}

text::TokenizerOptions tokenizer_options(const cxxopts::ParseResult& r) {
  text::TokenizerOptions o;
  const std::int64_t n = r["num-words"].as<std::int64_t>();
  if (n < 0) throw UsageError("--num-words must be >= 0, got " + std::to_string(n));
  o.num_words = n;
  if (r.count("oov-token")) o.oov_token = r["oov-token"].as<std::string>();
  o.lower = !r.count("no-lower");
  o.char_level = r.count("char-level") > 0;
  if (r.count("filters")) o.filters = r["filters"].as<std::string>();
  if (r.count("split")) o.split = r["split"].as<std::string>();
  if (o.split.empty()) throw UsageError("--split must not be empty");
  return o;
}

void add_padding_options(cxxopts::Options& options, const std::string& default_maxlen) {
  auto maxlen = cxxopts::value<std::int64_t>();
  if (!default_maxlen.empty()) maxlen->default_value(default_maxlen);
  options.add_options("Padding (Keras pad_sequences arguments)")
      ("maxlen", default_maxlen.empty() ? "Pad / truncate every row to N ids (default: no padding)"
                                        : "Pad / truncate every row to N ids", maxlen)
      ("padding", "Where padding goes: pre (left) or post (right)", cxxopts::value<std::string>()->default_value("pre"))
      ("truncating", "Which end long rows lose: pre (keep the end) or post (keep the start)",
       cxxopts::value<std::string>()->default_value("pre"));
}

text::PadOptions padding_options(const cxxopts::ParseResult& r) {
  text::PadOptions o;
  if (r.count("maxlen") || r["maxlen"].has_default()) {
    const std::int64_t n = r["maxlen"].as<std::int64_t>();
    if (n < 1) throw UsageError("--maxlen must be >= 1, got " + std::to_string(n));
    o.maxlen = n;
  }
  try {
    o.padding = text::parse_side(r["padding"].as<std::string>(), "--padding");
    o.truncating = text::parse_side(r["truncating"].as<std::string>(), "--truncating");
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return o;
}

void add_prepare_options(cxxopts::Options& options) {
  options.add_options("Input")
      ("csv", "CSV file with a header row (Kaggle layout)", cxxopts::value<std::string>())
      ("text-column", "Column holding the text", cxxopts::value<std::string>()->default_value("comment_text"))
      ("labels", "Comma-separated 0/1 label columns ('' for none)",
       cxxopts::value<std::string>()->default_value("toxic,severe_toxic,obscene,threat,insult,identity_hate"))
      ("id-column", "Column holding row ids (row numbers are used when the default is absent)",
       cxxopts::value<std::string>()->default_value("id"))
      ("tokenizer", "Apply this fitted tokenizer.json instead of fitting one (label columns become optional)",
       cxxopts::value<std::string>());
  add_tokenizer_options(options);
  add_padding_options(options, "200");
}

data::PrepareOptions prepare_options(const cxxopts::ParseResult& r, const std::string& csv, int threads) {
  data::PrepareOptions o;
  o.csv = csv;
  o.threads = threads;
  o.pad = padding_options(r);
  if (r.count("tokenizer")) {
    if (any_tokenizer_option(r))
      throw UsageError("tokenizer settings come from --tokenizer; drop --num-words/--oov-token/--no-lower/...");
    o.apply_tokenizer = r["tokenizer"].as<std::string>();
  }
  o.tokenizer = tokenizer_options(r);  // validated even when unused
  o.columns.text_column = r["text-column"].as<std::string>();
  o.columns.label_columns = split_list(r["labels"].as<std::string>());
  o.columns.labels_optional = !o.apply_tokenizer.empty() && !r.count("labels");
  o.columns.id_column = r["id-column"].as<std::string>();
  o.columns.id_required = r.count("id-column") > 0;
  return o;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace attn::apps
