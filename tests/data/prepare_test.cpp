// `attn prepare` as a library call: a CSV becomes Keras' padded word indices with lengths, labels
// and ids, and a fitted tokenizer; a fitted tokenizer applies exactly as it tokenised; the three
// files are written together; errors name the file, the line and the column (or the flag).
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "attn/data/inputs.h"
#include "attn/data/prepare.h"
#include "attn/io/atomic_file.h"
#include "attn/io/prepared_data.h"
#include "attn/text/csv.h"
#include "data_test_util.h"

using namespace attn;
using data_test::given;
namespace fs = std::filesystem;

namespace {

/// A directory of the test's own in the system's temp directory, removed with its files.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("attn_prepare_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name, const std::string& content) const {
    const fs::path p = path / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

// Words by count, ties in first-seen order: the 1, cat 2, sat 3, ran 4, you 5, are 6, a 7, dog 8.
const std::string kTrain =
    "id,comment_text,toxic,insult\n"
    "a1,\"The cat sat, the cat ran!\",0,0\n"
    "a2,You are a DOG,1,1\n"
    "a3,\"\",0,0\n";

data::PrepareOptions fit_options(const std::string& csv, int threads = 1) {
  data::PrepareOptions o;
  o.csv = csv;
  o.columns.label_columns = {"toxic", "insult"};
  o.tokenizer.num_words = 6;  // indices 1..5 are emitted
  o.pad.maxlen = 4;
  o.threads = threads;
  return o;
}

}  // namespace

TEST_CASE("prepare_csv: padded word indices, lengths, labels, ids and the fitted tokenizer, as Keras makes them", "[data][prepare]") {
  const TempDir dir("fit");
  const std::string csv = dir.file("train.csv", kTrain);
  for (const int threads : {1, 3}) {
    INFO(threads << " threads");
    const data::Prepared p = data::prepare_csv(fit_options(csv, threads));
    const text::PaddedSequences& x = p.data.x;
    CHECK(x.rows == 3);
    CHECK(x.cols == 4);
    // "the cat sat the cat ran" = 1 2 3 1 2 4 keeps its last 4 (truncating 'pre'); of "you are a
    // dog" only "you" (5) is below num_words; the empty text is all padding ('pre': on the left).
    CHECK(x.ids == std::vector<std::int32_t>{3, 1, 2, 4, 0, 0, 0, 5, 0, 0, 0, 0});
    CHECK(x.lengths == std::vector<std::int64_t>{4, 1, 0});
    CHECK(x.truncated_tokens == 2);
    CHECK(p.data.padding == text::Side::kPre);
    CHECK(p.data.ids == std::vector<std::string>{"a1", "a2", "a3"});
    CHECK(p.data.label_names == std::vector<std::string>{"toxic", "insult"});
    CHECK(p.data.labels == std::vector<float>{0, 0, 1, 1, 0, 0});
    // Fitted on every row (the empty one counts); num_words cuts the output, not the vocabulary.
    CHECK(p.tokenizer.document_count() == 3);
    CHECK(p.tokenizer.vocabulary_size() == 8);
    CHECK(p.tokenizer.options().num_words == 6);
    CHECK(p.tokenizer.word_index("the") == 1);
    CHECK(p.tokenizer.word_index("dog") == 8);
    CHECK(p.tokenizer.word_count("cat") == 2);
    REQUIRE(p.tokenizer_json.valid());
    CHECK(p.tokenizer_json.get() == p.tokenizer.to_json());
    // The report that becomes prepare.json
    const nlohmann::ordered_json& r = p.report;
    CHECK(r.at("rows").get<std::int64_t>() == 3);
    CHECK(r.at("id_column").get<std::string>() == "id");
    CHECK(r.at("tokenizer").at("fitted_here").get<bool>());
    CHECK(r.at("tokens").at("total").get<std::int64_t>() == 10);
    CHECK(r.at("tokens").at("emitted").get<std::int64_t>() == 7);
    CHECK(r.at("tokens").at("dropped_by_num_words").get<std::int64_t>() == 3);
    CHECK(r.at("tokens").at("truncated_by_maxlen").get<std::int64_t>() == 2);
    CHECK(r.at("sequence_lengths").at("max").get<std::int64_t>() == 6);
    CHECK(r.at("sequence_lengths").at("empty_rows").get<std::int64_t>() == 1);
    CHECK(r.at("label_positive_rate").at("toxic").get<double>() == Approx(1.0 / 3));
  }
}

TEST_CASE("prepare_csv with a fitted tokenizer (in memory or tokenizer.json) applies it without fitting", "[data][prepare]") {
  const TempDir dir("apply");
  const data::Prepared fitted = data::prepare_csv(fit_options(dir.file("train.csv", kTrain)));
  // No id column (ids are then 1-based row numbers) and no label columns (optional when applying).
  data::PrepareOptions o;
  o.csv = dir.file("test.csv", "comment_text\nthe dog and the cat\nDOG!\n");
  o.columns.labels_optional = true;
  o.pad.maxlen = 4;
  o.apply_loaded_tokenizer = &fitted.tokenizer;
  const data::Prepared applied = data::prepare_csv(o);
  // "dog" (8) is beyond num_words and "and" unknown: both dropped, as texts_to_sequences does.
  CHECK(fitted.tokenizer.texts_to_sequences({"the dog and the cat", "DOG!"}) == std::vector<text::Sequence>{{1, 1, 2}, {}});
  CHECK(applied.data.x.ids == std::vector<std::int32_t>{0, 1, 1, 2, 0, 0, 0, 0});
  CHECK(applied.data.x.lengths == std::vector<std::int64_t>{3, 0});
  CHECK(applied.data.ids == std::vector<std::string>{"1", "2"});
  CHECK(applied.data.label_names.empty());
  CHECK(applied.data.labels.empty());
  CHECK(applied.report.at("id_column").is_null());
  CHECK_FALSE(applied.report.at("tokenizer").at("fitted_here").get<bool>());
  CHECK(applied.report.at("tokenizer").at("source").get<std::string>() == "(given)");
  CHECK(applied.report.at("tokens").at("beyond_num_words").get<std::int64_t>() == 2);
  CHECK(applied.report.at("tokens").at("unknown").get<std::int64_t>() == 1);
  // Applying fits nothing: the tokenizer is the given one, unchanged, and there is no JSON to save.
  CHECK(applied.tokenizer.document_count() == 3);
  CHECK(applied.tokenizer.to_json() == fitted.tokenizer.to_json());
  CHECK_FALSE(applied.tokenizer_json.valid());

  // The same from the tokenizer.json that write_prepared_dir saved.
  data::write_prepared_dir(fitted, dir / "train");
  o.apply_loaded_tokenizer = nullptr;
  o.apply_tokenizer = dir / "train/tokenizer.json";
  const data::Prepared from_file = data::prepare_csv(o);
  CHECK(from_file.data.x.ids == applied.data.x.ids);
  CHECK(from_file.report.at("tokenizer").at("source").get<std::string>() == o.apply_tokenizer);
  o.apply_tokenizer = dir / "missing.json";
  CHECK_THROWS_WITH(data::prepare_csv(o), Catch::Contains(o.apply_tokenizer));
}

TEST_CASE("write_prepared_dir writes data.pt, tokenizer.json and prepare.json, and padding while writing gives the same data.pt",
          "[data][prepare]") {
  const TempDir dir("write");
  const std::string csv = dir.file("train.csv", kTrain);
  const data::Prepared p = data::prepare_csv(fit_options(csv, 2));
  data::write_prepared_dir(p, dir / "out");
  io::write_prepared(dir / "reference.pt", p.data);
  const std::string data_pt = io::read_file(dir / "out/data.pt");
  CHECK(data_pt == io::read_file(dir / "reference.pt"));  // the prepared data, as io::write_prepared writes it
  CHECK(io::read_file(dir / "out/tokenizer.json") == p.tokenizer.to_json());
  const nlohmann::json report = nlohmann::json::parse(io::read_file(dir / "out/prepare.json"));
  CHECK(report.at("format").get<std::string>() == "attn.prepare/1");
  CHECK(report.at("rows").get<std::int64_t>() == 3);
  CHECK(report.at("tokenizer").at("num_words").get<std::int64_t>() == 6);
  CHECK(report.at("seconds").contains("write"));

  // attn prepare keeps only x's shape in memory and pads the rows straight into data.pt.
  data::PrepareOptions streamed = fit_options(csv, 2);
  streamed.pad_in_memory = false;
  const data::Prepared s = data::prepare_csv(streamed);
  CHECK(s.data.x.ids.empty());
  CHECK(s.data.x.lengths == p.data.x.lengths);
  data::write_prepared_dir(s, dir / "streamed");
  CHECK(io::read_file(dir / "streamed/data.pt") == data_pt);

  const std::string blocked = dir.file("a_file", "x") + "/out";  // a directory that cannot be made
  CHECK_THROWS_WITH(data::write_prepared_dir(p, blocked), Catch::Contains(blocked));
}

TEST_CASE("summary: rows, the tokenizer, the token accounting and the lengths", "[data][prepare]") {
  const TempDir dir("summary");
  const std::string csv = dir.file("train.csv", kTrain);
  const data::Prepared p = data::prepare_csv(fit_options(csv));
  const std::string s = data::summary(p);
  CHECK_THAT(s, Catch::StartsWith("prepared 3 rows of " + csv + " (1 threads)\n"));
  CHECK_THAT(s, Catch::Contains("fitted here: 8 distinct words, indices below 6 kept"));
  CHECK_THAT(s, Catch::Contains("10 in all: 7 emitted, 3 beyond num_words, 0 unknown (both dropped); 2 cut by maxlen"));
  CHECK_THAT(s, Catch::Contains("max 6; 1 empty rows"));
}

TEST_CASE("prepare_csv errors name the file, the line and the column", "[data][prepare]") {
  const TempDir dir("errors");
  const std::string no_insult = dir.file("no_insult.csv", "id,comment_text,toxic\na1,hi,0\n");
  CHECK_THROWS_AS(data::prepare_csv(fit_options(no_insult)), text::CsvError);
  CHECK_THROWS_WITH(data::prepare_csv(fit_options(no_insult)),
                    no_insult + ":1: no label column 'insult' in the header (columns: id, comment_text, toxic)");
  // The bad label is on line 4: the record before it spans lines 2 and 3.
  const std::string bad_label = dir.file("bad_label.csv", "id,comment_text,toxic,insult\na1,\"two\nlines\",0,0\na2,hi,2,0\n");
  CHECK_THROWS_AS(data::prepare_csv(fit_options(bad_label)), text::CsvError);
  CHECK_THROWS_WITH(data::prepare_csv(fit_options(bad_label)), bad_label + ":4: column 3 (toxic): label must be 0 or 1, got '2'");
  const std::string no_text = dir.file("no_text.csv", "id,text,toxic,insult\na1,hi,0,0\n");
  CHECK_THROWS_WITH(data::prepare_csv(fit_options(no_text)), Catch::StartsWith(no_text + ":1: no column 'comment_text'"));
  const std::string bad_utf8 = dir.file("bad_utf8.csv", "id,comment_text,toxic,insult\na1,caf\xE9,0,0\n");
  CHECK_THROWS_WITH(data::prepare_csv(fit_options(bad_utf8)),
                    bad_utf8 + ":2: column 2 (comment_text): invalid UTF-8 (byte 0xE9 at offset 3 of the field)");
  const std::string header_only = dir.file("header_only.csv", "id,comment_text,toxic,insult\n");
  CHECK_THROWS_WITH(data::prepare_csv(fit_options(header_only)), header_only + ": no data rows (only a header)");
}

TEST_CASE("prepare_options: Keras tokenizer and pad_sequences settings and columns, bad values naming the flag", "[data][prepare]") {
  const auto specs = data::prepare_inputs();
  const data::PrepareOptions o = data::prepare_options(given({{"csv", "t.csv"},
                                                              {"num-words", "0"},
                                                              {"oov-token", "<OOV>"},
                                                              {"no-lower", ""},
                                                              {"char-level", ""},
                                                              {"filters", "!?"},
                                                              {"split", "|"},
                                                              {"text-column", "body"},
                                                              {"labels", "a,b"},
                                                              {"id-column", "key"},
                                                              {"maxlen", "50"},
                                                              {"padding", "post"},
                                                              {"truncating", "post"}},
                                                             specs),
                                                       4);
  CHECK(o.csv == "t.csv");
  CHECK(o.threads == 4);
  CHECK(o.tokenizer.num_words == 0);  // Keras: 0 means no limit
  CHECK(o.tokenizer.oov_token == std::string("<OOV>"));
  CHECK_FALSE(o.tokenizer.lower);
  CHECK(o.tokenizer.char_level);
  CHECK(o.tokenizer.filters == "!?");
  CHECK(o.tokenizer.split == "|");
  CHECK(o.columns.text_column == "body");
  CHECK(o.columns.label_columns == std::vector<std::string>{"a", "b"});
  CHECK_FALSE(o.columns.labels_optional);
  CHECK(o.columns.id_column == "key");
  CHECK(o.columns.id_required);  // a given id column must be there
  CHECK(o.pad.maxlen == 50);
  CHECK(o.pad.padding == text::Side::kPost);
  CHECK(o.pad.truncating == text::Side::kPost);
  CHECK(o.apply_tokenizer.empty());

  // The defaults are Keras' Tokenizer(): its filters, lowercase, one space, no OOV token.
  const data::PrepareOptions d = data::prepare_options(given({{"csv", "t.csv"}}, specs), 1);
  CHECK(d.tokenizer.filters == text::kDefaultFilters);
  CHECK(d.tokenizer.lower);
  CHECK_FALSE(d.tokenizer.char_level);
  CHECK(d.tokenizer.split == " ");
  CHECK_FALSE(d.tokenizer.oov_token.has_value());
  CHECK(d.columns.id_column == "id");
  CHECK_FALSE(d.columns.id_required);  // the default id column may be absent: row numbers are used
  CHECK(data::prepare_options(given({{"csv", "t.csv"}, {"labels", ""}}, specs), 1).columns.label_columns.empty());

  CHECK_THROWS_AS(data::prepare_options(given({{"csv", "a"}, {"num-words", "-1"}}, specs), 1), std::invalid_argument);
  CHECK_THROWS_WITH(data::prepare_options(given({{"csv", "a"}, {"num-words", "-1"}}, specs), 1), "--num-words must be >= 0, got -1");
  CHECK_THROWS_WITH(data::prepare_options(given({{"csv", "a"}, {"num-words", "many"}}, specs), 1), "--num-words: 'many' is not an integer");
  CHECK_THROWS_WITH(data::prepare_options(given({{"csv", "a"}, {"split", ""}}, specs), 1), "--split must not be empty");
  CHECK_THROWS_WITH(data::prepare_options(given({{"csv", "a"}, {"maxlen", "-3"}}, specs), 1), "--maxlen must be >= 1, got -3");
  CHECK_THROWS_WITH(data::prepare_options(given({{"csv", "a"}, {"truncating", "middle"}}, specs), 1),
                    "--truncating must be 'pre' or 'post', got 'middle'");
  CHECK_THROWS_AS(data::prepare_options(given({{"csv", "a"}, {"truncating", "middle"}}, specs), 1), std::invalid_argument);
}
