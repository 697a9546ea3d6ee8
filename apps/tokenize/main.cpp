// attn tokenize: texts (stdin lines or a CSV column) -> one line of word indices per text.
#include <iostream>

#include "../common/app.h"
#include "attn/data/prepare.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options("attn tokenize",
                           "Print the word indices of texts with a fitted tokenizer.json (Keras format): one line of\n"
                           "space-separated ids per text. Texts come from stdin, one per line, or from a CSV column.");
  options.add_options("Input")
      ("tokenizer", "Fitted tokenizer.json (from attn prepare or Keras' to_json)", cxxopts::value<std::string>())
      ("csv", "Read texts from this CSV instead of stdin", cxxopts::value<std::string>())
      ("text-column", "CSV column holding the text", cxxopts::value<std::string>()->default_value("comment_text"));
  // clang-format on
  const auto padding = data::padding_inputs("");
  add_inputs(options, padding);
  add_threads_option(options);
  const cxxopts::ParseResult r = parse_options(options, argc, argv);
  if (!r.count("csv") && r.count("text-column")) throw UsageError("--text-column needs --csv");
  data::TokenizeRequest request;
  request.tokenizer = required<std::string>(r, "tokenizer");
  request.csv = given<std::string>(r, "csv").value_or("");
  request.text_column = r["text-column"].as<std::string>();
  request.pad = data::padding_options(inputs_of(r, padding));
  request.threads = threads_option(r);
  std::cout << data::tokenize(request, stdin_lines) << std::flush;
  if (!std::cout) throw std::runtime_error("stdout: write failed");
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app("attn tokenize", attn::apps::run, argc, argv); }
