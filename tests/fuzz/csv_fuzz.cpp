// The CSV readers on arbitrary bytes: a clean error (std::exception) or rows, never a crash.
#include <sstream>

#include "attn/data/tables.h"
#include "attn/text/csv.h"
#include "attn/text/dataset.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    std::istringstream in(bytes);
    text::CsvReader reader(in, "fuzz.csv");
    text::CsvRecord record;
    while (reader.next(record)) {
    }
  } catch (const std::exception&) {
  }
  const std::string path = fuzz::as_file(data, size, ".csv");
  try {
    text::TextCsvOptions o;
    o.labels_optional = true;
    text::read_text_csv_blocks(path, o, 7, [](text::TextBlock&&) {});
  } catch (const std::exception&) {
  }
  try {
    data::read_feature_csv(path, {}, "label", true);
  } catch (const std::exception&) {
  }
  try {
    data::read_pair_csv(path, "source", "target", true);
  } catch (const std::exception&) {
  }
  try {
    text::read_label_csv(path, {"toxic", "insult"});
  } catch (const std::exception&) {
  }
  return 0;
}
