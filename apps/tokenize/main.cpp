// attn tokenize: texts (stdin lines or a CSV column) -> one line of word indices per text.
#include <iostream>
#include <string>

#include "../common/app.h"
#include "attn/io/atomic_file.h"
#include "attn/text/dataset.h"
#include "attn/text/unicode.h"

namespace attn::apps {
namespace {

std::vector<std::string> read_stdin_lines() {
  std::vector<std::string> texts;
  std::string line;
  std::int64_t n = 0;
  while (std::getline(std::cin, line)) {  // strips the '\n' only; a '\r' stays part of the text, as in Keras
    ++n;
    const std::size_t bad = text::find_invalid_utf8(line);
    if (bad != std::string::npos)
      throw std::runtime_error("stdin:" + std::to_string(n) + ": invalid UTF-8 at byte offset " + std::to_string(bad));
    texts.push_back(std::move(line));
  }
  return texts;
}

std::vector<std::string> read_csv_column(const std::string& path, const std::string& column) {
  text::TextCsvOptions o;
  o.text_column = column;
  o.label_columns.clear();
  o.id_column.clear();
  std::vector<std::string> texts;
  text::read_text_csv_blocks(path, o, 4096, [&](text::TextBlock&& b) {
    texts.insert(texts.end(), std::make_move_iterator(b.texts.begin()), std::make_move_iterator(b.texts.end()));
  });
  return texts;
}

int run(int argc, char** argv) {
  cxxopts::Options options("attn tokenize",
                           "Print the word indices of texts with a fitted tokenizer.json (Keras format): one line of\n"
                           "space-separated ids per text. Texts come from stdin, one per line, or from a CSV column.");
  options.add_options("Input")
      ("tokenizer", "Fitted tokenizer.json (from attn prepare or Keras' to_json)", cxxopts::value<std::string>())
      ("csv", "Read texts from this CSV instead of stdin", cxxopts::value<std::string>())
      ("text-column", "CSV column holding the text", cxxopts::value<std::string>()->default_value("comment_text"));
  add_padding_options(options, "");
  add_threads_option(options);
  const auto parsed = parse_or_help(options, argc, argv);
  if (!parsed) return kExitOk;
  const auto& r = *parsed;

  const auto tokenizer_path = required<std::string>(r, "tokenizer");
  const int threads = threads_option(r);
  const text::PadOptions pad = padding_options(r);
  if (!r.count("csv") && r.count("text-column")) throw UsageError("--text-column needs --csv");
  const auto tokenizer = text::Tokenizer::from_json(io::read_file(tokenizer_path), tokenizer_path);
  const std::vector<std::string> texts =
      r.count("csv") ? read_csv_column(r["csv"].as<std::string>(), r["text-column"].as<std::string>()) : read_stdin_lines();
  std::vector<text::Sequence> seqs = tokenizer.texts_to_sequences(texts, threads);

  std::string out;
  auto print_row = [&out](const std::int32_t* ids, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      if (i) out += ' ';
      out += std::to_string(ids[i]);
    }
    out += '\n';
  };
  if (pad.maxlen) {
    const text::PaddedSequences p = text::pad_sequences(seqs, pad);
    for (std::int64_t row = 0; row < p.rows; ++row)
      print_row(p.ids.data() + row * p.cols, static_cast<std::size_t>(p.cols));
  } else {
    for (const auto& s : seqs) print_row(s.data(), s.size());
  }
  std::cout << out << std::flush;
  if (!std::cout) throw std::runtime_error("stdout: write failed");
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) {
  return attn::apps::guarded("attn tokenize", [&] { return attn::apps::run(argc, argv); });
}
