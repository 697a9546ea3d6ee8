// Reading labelled text files: 0/1 label columns, or one class per row (multi-class), in each format.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "attn/text/dataset.h"

using namespace attn;

namespace {

std::string write_temp(const std::string& name, const std::string& content) {
  const auto path = std::filesystem::temp_directory_path() / ("attn_dataset_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << content;
  return path.string();
}

struct Read {
  text::TextColumns columns;
  std::vector<std::string> ids, texts;
  std::vector<float> labels;
};

Read read(const std::string& path, const text::TextCsvOptions& o) {
  Read r;
  r.columns = text::read_text_csv_blocks(path, o, 2, [&](text::TextBlock&& b) {
    r.ids.insert(r.ids.end(), b.ids.begin(), b.ids.end());
    for (std::size_t i = 0; i < b.texts.size(); ++i) r.texts.emplace_back(b.texts[i]);
    r.labels.insert(r.labels.end(), b.labels.begin(), b.labels.end());
  });
  return r;
}

text::TextCsvOptions by_class(const std::string& column, std::vector<std::string> classes = {}) {
  text::TextCsvOptions o;
  o.text_column = "text";
  o.class_column = column;
  o.classes = std::move(classes);
  return o;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("one class per row: classes sorted (numerically when whole numbers), one-hot labels", "[dataset]") {
  const std::string csv = write_temp("davidson.csv", "id,class,text\n1,2,a\n2,10,b\n3,1,c\n4,2,d\n");
  const Read r = read(csv, by_class("class"));
  CHECK(r.columns.label_names == std::vector<std::string>{"1", "2", "10"});  // not "1", "10", "2"
  CHECK(r.labels == std::vector<float>{0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0});
  CHECK(text::read_classes(csv, "class") == std::vector<std::string>{"1", "2", "10"});

  const std::string names = write_temp("names.csv", "id,label,text\n1,offensive,a\n2,normal,b\n3,hatespeech,c\n");
  CHECK(read(names, by_class("label")).columns.label_names == std::vector<std::string>{"hatespeech", "normal", "offensive"});
  // Given classes fix the order.
  const Read given = read(names, by_class("label", {"normal", "offensive", "hatespeech"}));
  CHECK(given.columns.label_names == std::vector<std::string>{"normal", "offensive", "hatespeech"});
  CHECK(given.labels == std::vector<float>{0, 1, 0, 1, 0, 0, 0, 0, 1});
}

TEST_CASE("one class per row from JSON Lines and TSV", "[dataset]") {
  const std::string jsonl = write_temp("hx.jsonl",
                                       "{\"post_id\": \"p1\", \"text\": \"you are fine\", \"label\": \"normal\"}\n"
                                       "{\"post_id\": \"p2\", \"text\": \"go away\", \"label\": \"offensive\"}\n");
  text::TextCsvOptions o = by_class("label");
  o.id_column = "post_id";
  const Read r = read(jsonl, o);
  CHECK(r.ids == std::vector<std::string>{"p1", "p2"});
  CHECK(r.texts == std::vector<std::string>{"you are fine", "go away"});
  CHECK(r.labels == std::vector<float>{1, 0, 0, 1});
  const std::string tsv = write_temp("olid.tsv", "id\ttext\tsubtask_a\r\n1\t\"quoted\", text\tOFF\r\n2\tplain\tNOT\r\n");
  const Read t = read(tsv, by_class("subtask_a"));
  CHECK(t.texts == std::vector<std::string>{"\"quoted\", text", "plain"});
  CHECK(t.columns.label_names == std::vector<std::string>{"NOT", "OFF"});
}

TEST_CASE("bad classes are errors naming file, line and column", "[dataset]") {
  const std::string one = write_temp("one.csv", "id,label,text\n1,x,a\n2,x,b\n");
  CHECK_THAT(error_of([&] { read(one, by_class("label")); }), Catch::Contains("one.csv: column 'label' holds one class ('x')"));
  const std::string empty = write_temp("empty.csv", "id,label,text\n1,x,a\n2,,b\n");
  CHECK_THAT(error_of([&] { read(empty, by_class("label")); }), Catch::Contains("empty.csv:3: column 2 (label): an empty class"));
  const std::string other = write_temp("other.csv", "id,label,text\n1,x,a\n2,z,b\n");
  CHECK_THAT(error_of([&] {
               read(other, by_class("label", {"x", "y"}));
             }),
             Catch::Contains("other.csv:3: column 2 (label): class 'z' is not one of the model's (x, y)"));
  CHECK_THAT(error_of([&] { read(other, by_class("klass")); }), Catch::Contains("klass"));
  const std::string jsonl = write_temp("missing.jsonl", "{\"text\": \"a\", \"label\": \"x\"}\n{\"label\": \"y\"}\n");
  CHECK_THAT(error_of([&] { read(jsonl, by_class("label")); }), Catch::Contains("missing.jsonl:2: column 1 (text)"));
  const std::string number = write_temp("number.jsonl", "{\"text\": \"a\", \"label\": \"x\"}\n{\"text\": 3, \"label\": \"y\"}\n");
  CHECK_THAT(error_of([&] { read(number, by_class("label")); }),
             Catch::Contains("number.jsonl:2: column 1 (text)") && Catch::Contains("string"));
  CHECK_THAT(error_of([] { text::parse_classes({"a", "a"}, "--classes"); }), Catch::Contains("--classes: class 'a' is given twice"));
  CHECK_THAT(error_of([] { text::parse_classes({"a"}, "--classes"); }), Catch::Contains("two or more"));
  CHECK_THAT(error_of([] { text::parse_classes({"a", ""}, "--classes"); }), Catch::Contains("an empty class name"));
}

TEST_CASE("a file without the class column reads without labels when labels are optional (a file to score)", "[dataset]") {
  const std::string csv = write_temp("test.csv", "id,text\n1,a\n");
  text::TextCsvOptions o = by_class("label", {"x", "y"});
  o.labels_optional = true;
  const Read r = read(csv, o);
  CHECK(r.columns.label_names.empty());
  CHECK(r.labels.empty());
}
