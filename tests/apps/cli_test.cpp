// End-to-end tests of the `attn` command: exit codes, error messages, output files.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

struct Run {
  int code;
  std::string out;  // stdout and stderr together
};

Run attn(const std::string& args, const std::string& stdin_text = "") {
  // One stdin file per test process: CTest runs test cases in parallel.
  const fs::path in = fs::temp_directory_path() / ("attn_cli_stdin_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(in, std::ios::binary) << stdin_text;
  std::string cmd = std::string(ATTN_BINARY) + " " + args + " < " + in.string() + " 2>&1";
  if (args.rfind("__limited__ ", 0) == 0) {  // "__limited__ KIB ARGS": under bash's ulimit -f KIB
    const std::size_t space = args.find(' ', 12);
    cmd = "bash -c 'ulimit -f " + args.substr(12, space - 12) + "; exec " + std::string(ATTN_BINARY) + " " + args.substr(space + 1) +
          "' < " + in.string() + " 2>&1";
  }
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("attn_cli_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string write(const fs::path& p, const std::string& content) {
  std::ofstream(p, std::ios::binary) << content;
  return p.string();
}

const std::string kHeader = "id,comment_text,toxic,severe_toxic,obscene,threat,insult,identity_hate\n";
const std::string kFixture = std::string(ATTN_TEST_DATA) + "/messy_comments.csv";

}  // namespace

TEST_CASE("attn --help, --version and unknown commands", "[cli][readers]") {
  auto r = attn("--help");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("prepare") && Catch::Contains("tokenize"));
  r = attn("--version");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("attn "));
  r = attn("frobnicate");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("unknown command 'frobnicate'") && Catch::Contains("prepare"));
  CHECK(attn("").code == 2);
  r = attn("prepare --help");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("--num-words") && Catch::Contains("--truncating") && Catch::Contains("--threads"));
}

TEST_CASE("bad flags are usage errors (exit 2)", "[cli][readers]") {
  const auto d = scratch("flags");
  auto r = attn("prepare --csv " + kFixture + " --out " + d.string() + " --bogus");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("bogus"));
  r = attn("prepare --out " + d.string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--csv is required"));
  r = attn("prepare --csv " + kFixture + " --out " + d.string() + " --padding middle");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--padding must be 'pre' or 'post'"));
  r = attn("prepare --csv " + kFixture + " --out " + d.string() + " --maxlen abc");
  CHECK(r.code == 2);
  r = attn("prepare --csv " + kFixture + " --out " + d.string() + " --maxlen 0");
  CHECK(r.code == 2);
  r = attn("prepare --csv " + kFixture + " --out " + d.string() + " --threads 0");
  CHECK(r.code == 2);
  r = attn("prepare --csv " + kFixture + " --out " + d.string() + " stray");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("unexpected argument 'stray'"));
  CHECK(fs::is_empty(d));
}

TEST_CASE("prepare writes tokenizer.json, data.pt and prepare.json", "[cli][readers]") {
  const auto d = scratch("prepare");
  auto r = attn("prepare --csv " + kFixture + " --out " + (d / "out").string() + " --maxlen 20 --threads 2");
  INFO(r.out);
  REQUIRE(r.code == 0);
  for (const char* f : {"tokenizer.json", "data.pt", "prepare.json"}) CHECK(fs::file_size(d / "out" / f) > 0);
  std::ifstream report(d / "out" / "prepare.json");
  const std::string text((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  CHECK_THAT(text, Catch::Contains("\"rows\": 147") && Catch::Contains("\"maxlen\": 20") && Catch::Contains("\"p95\"") &&
                       Catch::Contains("\"beyond_num_words\""));
  int entries = 0;
  for (const auto& e : fs::directory_iterator(d / "out")) entries += e.is_regular_file();
  CHECK(entries == 3);  // no temporaries left behind

  // tokenize reuses the fitted tokenizer: stdin lines, '\r' kept, unknown words dropped
  r = attn("tokenize --tokenizer " + (d / "out" / "tokenizer.json").string(), "ice cream sucks\nzzzunknown\n\n");
  REQUIRE(r.code == 0);
  const auto lines = r.out;
  CHECK(std::count(lines.begin(), lines.end(), '\n') == 3);
  CHECK_THAT(lines, Catch::Matches("[0-9]+ [0-9]+ [0-9]+\n\n\n"));
  r = attn("tokenize --tokenizer " + (d / "out" / "tokenizer.json").string() + " --maxlen 5", "ice cream\n");
  CHECK_THAT(r.out, Catch::Matches("0 0 0 [0-9]+ [0-9]+\n"));
}

TEST_CASE("bad input files fail with file, line and column (exit 1) and write nothing", "[cli][readers]") {
  const auto d = scratch("bad");
  const std::string out = (d / "out").string();
  struct Case {
    std::string csv, expect, extra = "";
  };
  const std::vector<Case> cases = {
      {kHeader + "1,fine,0,0,0,0,0,0\n2,\"never closed,0,0,0,0,0,0\n", "bad.csv:3: column 2 (comment_text): unterminated"},
      {kHeader + "1,fine,0,0,0,0,0,0\n2,ragged,0,0\n", "bad.csv:3: expected 8 fields"},
      {kHeader + "1,fine,0,0,0,0,0,0\n2,bad label,0,0,2,0,0,0\n", "bad.csv:3: column 5 (obscene): label must be 0 or 1, got '2'"},
      {kHeader + "1,\"multi\nline \xFF\",0,0,0,0,0,0\n", "bad.csv:3: column 2 (comment_text): invalid UTF-8"},
      {"id,text,toxic\n1,hi,0\n", "bad.csv:1: no column 'comment_text'"},
      {"id,comment_text,toxic\n1,hi,0\n", "no label column 'severe_toxic'"},
      {kHeader + "1,hi,0,0,0,0,0,0\n", "no column 'ident'", " --id-column ident"},
  };
  for (const Case& c : cases) {
    const std::string csv = write(d / "bad.csv", c.csv);
    const auto r = attn("prepare --csv " + csv + " --out " + out + c.extra);
    INFO(c.expect << "\n" << r.out);
    CHECK(r.code == 1);
    CHECK_THAT(r.out, Catch::Contains(c.expect));
    CHECK_FALSE(fs::exists(d / "out" / "data.pt"));
  }
  auto r = attn("prepare --csv " + (d / "missing.csv").string() + " --out " + out);
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("missing.csv: cannot open"));
}

TEST_CASE("a corrupt or mismatched tokenizer.json is named with its key", "[cli][readers]") {
  const auto d = scratch("tok");
  const std::string csv = write(d / "test.csv", "id,comment_text\n1,hello\n");
  auto r = attn("prepare --csv " + csv + " --out " + (d / "o").string() + " --tokenizer " + write(d / "t.json", "{\"config\": 3"));
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("t.json: not valid JSON"));
  r = attn("tokenize --tokenizer " + write(d / "m.json", "{\"class_name\": \"Tokenizer\", \"config\": {\"num_words\": \"x\"}}"), "hi\n");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("m.json: config.num_words: expected an integer"));
  r = attn("tokenize --tokenizer " + (d / "none.json").string(), "hi\n");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("none.json: cannot open"));
  r = attn("prepare --csv " + csv + " --out " + (d / "o").string() + " --tokenizer x.json --num-words 5");
  CHECK(r.code == 2);
}

TEST_CASE("tokenize rejects invalid UTF-8 on stdin with its line", "[cli][readers]") {
  const auto d = scratch("utf8");
  REQUIRE(attn("prepare --csv " + kFixture + " --out " + d.string()).code == 0);
  const auto r = attn("tokenize --tokenizer " + (d / "tokenizer.json").string(), "ok\nbad \xC3\x28\n");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("stdin:2: invalid UTF-8"));
}

// ---- The main job: train / explain / evaluate / export on the tiny run (fixture tiny_run) ----

namespace {
const std::string kRun = std::string(ATTN_TINY_RUN) + "/run";
}

TEST_CASE("a trained run holds every file, and train reports per-label AUC", "[cli][train]") {
  for (const char* f : {"config.json", "tokenizer.json", "metrics.jsonl", "checkpoint.pt", "model.pt", "data/data.pt"})
    CHECK(fs::exists(fs::path(kRun) / f));
  std::ifstream metrics(fs::path(kRun) / "metrics.jsonl");
  std::string line;
  int epochs = 0;
  while (std::getline(metrics, line)) {
    ++epochs;
    CHECK_THAT(line, Catch::Contains("\"val_auc\":{\"toxic\"") && Catch::Contains("\"val_mean_auc\""));
  }
  CHECK(epochs == 2);
}

TEST_CASE("explain shows every word, dropped ones included", "[cli][explain]") {
  const auto r = attn("explain --model " + kRun + " \"ice cream sucks zzzqqq !!!\"");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("toxic 0.") && Catch::Contains("sucks") && Catch::Contains("zzzqqq") &&
                        Catch::Contains("dropped (unknown word)") && Catch::Contains("filtered"));
  const auto d = scratch("html");
  CHECK(attn("explain --model " + kRun + " --html " + (d / "x.html").string() + " \"ice cream\"").code == 0);
  std::ifstream html(d / "x.html");
  const std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  CHECK_THAT(page, Catch::StartsWith("<!DOCTYPE html>") && Catch::Contains("ice"));
}

TEST_CASE("explain --methods: the methods per word for a label, every label in --json, a CSV streamed", "[cli][explain][importance]") {
  auto r = attn("explain --model " + kRun +
                " --methods attention,gradient,integrated-gradients,leave-one-out --label insult "
                "\"you are a stupid idiot zzzqqq\"");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("importance for insult") && Catch::Contains("integrated-gradients") &&
                        Catch::Contains("completeness gap") && Catch::Contains("dropped (unknown word)"));
  // The default is today's output, byte for byte.
  CHECK(attn("explain --model " + kRun + " --methods attention \"ice cream sucks\"").out ==
        attn("explain --model " + kRun + " \"ice cream sucks\"").out);
  // --json: every method for every label, one score per id.
  r = attn("explain --json --model " + kRun + " --methods grad-input,leave-one-out --steps 8 \"ice cream sucks\"");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("importance").at("grad-input").size() == 6);
  CHECK(j.at("importance").at("leave-one-out").at("threat").size() == j.at("ids").size());
  CHECK(j.at("word_importance").at("grad-input").at("toxic").size() == j.at("words").size());
  CHECK_FALSE(j.contains("integrated_gradients"));
  // A whole CSV, one JSON line per row, its rows picked by --rows.
  const auto d = scratch("explain_csv");
  const std::string csv = write(d / "texts.csv", "id,comment_text\na,ice cream sucks\nb,\"thanks, good edit\"\nc,zzzqqq\n");
  r = attn("explain --json --model " + kRun + " --csv " + csv + " --methods integrated-gradients --steps 4");
  REQUIRE(r.code == 0);
  std::istringstream lines(r.out);
  std::string line;
  std::vector<nlohmann::json> rows;
  while (std::getline(lines, line)) rows.push_back(nlohmann::json::parse(line));
  REQUIRE(rows.size() == 3);
  CHECK(rows[1].at("text") == "thanks, good edit");
  CHECK(rows[2].at("importance").at("integrated-gradients").at("toxic").empty());  // no known word: a clear empty list
  CHECK(rows[2].at("integrated_gradients").at("completeness_gap").at("toxic") == 0.0);
  r = attn("explain --json --model " + kRun + " --csv " + csv + " --rows 3,1");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("{\"text\":\"zzzqqq\""));
  // Bad flags: exit 2 naming the flag and the choices.
  r = attn("explain --model " + kRun + " --methods shap hi");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--methods: unknown method 'shap'") && Catch::Contains("integrated-gradients"));
  // --method, the flag's old name, still reads the same, is named in its errors, and is not taken with --methods.
  CHECK(attn("explain --json --model " + kRun + " --method grad-input,leave-one-out --steps 8 \"ice cream sucks\"").out ==
        attn("explain --json --model " + kRun + " --methods grad-input,leave-one-out --steps 8 \"ice cream sucks\"").out);
  r = attn("explain --model " + kRun + " --method shap hi");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--method: unknown method 'shap'"));
  r = attn("explain --model " + kRun + " --method gradient --methods gradient hi");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--method is --methods' old name"));
  for (const char* command : {"explain", "aggregate", "faithfulness", "plausibility"}) {  // one name, one line in --help
    r = attn(std::string(command) + " --help");
    CHECK_THAT(r.out, Catch::Contains("--methods arg") && !Catch::Contains("--method arg") && Catch::Contains("--steps arg"));
  }
  // Each command offers the inputs of the models it takes: aggregate and audit read texts, so not
  // seq2seq's --beam or feature models' --svg, which explain offers.
  CHECK_THAT(attn("explain --help").out, Catch::Contains("--beam arg") && Catch::Contains("--svg arg") && Catch::Contains("--rows arg"));
  for (const char* command : {"aggregate", "audit"}) {
    r = attn(std::string(command) + " --help");
    CHECK_THAT(r.out, Catch::Contains("--text-column arg") && Catch::Contains("--rows arg") && !Catch::Contains("--beam") &&
                          !Catch::Contains("--svg"));
  }
  // robustness reads a labelled file as evaluate does, but draws no pictures, writes no bias page
  // and decodes nothing.
  CHECK_THAT(attn("evaluate --help").out, Catch::Contains("--bias-html arg") && Catch::Contains("--svg arg"));
  r = attn("robustness --help");
  CHECK_THAT(r.out, Catch::Contains("--text-column arg") && Catch::Contains("--labels-csv arg") && !Catch::Contains("--bias-html") &&
                        !Catch::Contains("--svg") && !Catch::Contains("--beam"));
  r = attn("robustness --model " + kRun + " --csv x.csv --bias-html b.html");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("bias-html") && Catch::Contains("does not exist"));
  r = attn("explain --model " + kRun + " --methods attention-rollout hi");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("cannot give 'attention-rollout'"));
  for (const char* steps : {"0", "5000"}) {
    r = attn("explain --model " + kRun + " --methods integrated-gradients --steps " + std::string(steps) + " hi");
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("--steps must be in 1..1024"));
  }
  r = attn("explain --model " + kRun + " --methods gradient --label spam hi");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--label: 'spam'") && Catch::Contains("identity_hate"));
  r = attn("explain --model " + kRun + " --csv " + csv + " --rows 9");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--rows: row 9 is not in 1..3"));
  r = attn("explain --model " + kRun + " --csv " + csv + " --text-column body");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("body"));
}

TEST_CASE("faithfulness: figures per method and label against a random floor, per-row lines, bad flags", "[cli][importance]") {
  const auto d = scratch("faithfulness");
  const std::string json = (d / "f.json").string(), rows = (d / "rows.jsonl").string();
  auto r = attn("faithfulness --model " + kRun + " --csv " + std::string(ATTN_TINY_RUN) + "/toxic.csv --rows 12 --steps 8 --json " + json +
                " --per-row " + rows);
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("comprehensiveness") && Catch::Contains("random") && Catch::Contains("agreement"));
  std::ifstream f(json);
  const auto j = nlohmann::json::parse(f);
  CHECK(j.at("rows") == 12);
  CHECK(j.at("bins") == std::vector<int>{1, 5, 10, 20, 50});
  for (const char* m : {"attention", "gradient", "grad-input", "integrated-gradients", "leave-one-out", "random"}) {
    INFO(m);
    const auto& toxic = j.at("methods").at(m).at("toxic");
    CHECK(toxic.at("comprehensiveness").size() == 5);
    CHECK(toxic.at("aopc_sufficiency").is_number());
  }
  CHECK(j.at("methods").at("leave-one-out").at("toxic").at("kendall_tau_loo") == 1.0);
  CHECK(j.at("agreement").at("gradient").at("attention") == j.at("agreement").at("attention").at("gradient"));
  std::ifstream per_row(rows);
  std::string line;
  int n = 0;
  while (std::getline(per_row, line)) {
    const auto row = nlohmann::json::parse(line);
    CHECK(row.at("units").get<int>() >= 2);
    ++n;
  }
  CHECK(n == 12);
  r = attn("faithfulness --model " + kRun + " --csv " + std::string(ATTN_TINY_RUN) + "/toxic.csv --rows 100000");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--rows 100000") && Catch::Contains("rows whose text keeps at least 2 tokens"));
  r = attn("faithfulness --model " + kRun + " --csv " + std::string(ATTN_TINY_RUN) + "/toxic.csv --methods attention,lime");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--methods: unknown method 'lime'"));
  r = attn("faithfulness --model " + std::string(ATTN_TINY_RUN) + "/dates --csv " + std::string(ATTN_TINY_RUN) + "/dates.csv");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("text and feature classifiers"));
  CHECK_FALSE(fs::exists(d / "never.json"));
}

TEST_CASE("explain cuts a long text to maxlen as training did, and says so", "[cli][explain]") {
  std::string text = "sucks";
  for (int i = 0; i < 250; ++i) text += " ice";
  const auto r = attn("explain --json --model " + kRun + " \"" + text + "\"");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("ids").size() == 200);  // the run's maxlen; Keras' truncating='pre' keeps the end
  CHECK(j.at("words")[0].at("status") == "dropped");
  CHECK_THAT(j.at("words")[0].at("reason").get<std::string>(), Catch::Contains("beyond maxlen 200"));
  CHECK(j.at("words")[250].at("status") == "kept");
}

TEST_CASE("model commands reject bad models and flags clearly", "[cli][train]") {
  const auto d = scratch("models");
  auto r = attn("train --csv " + kFixture + " --model gpt --out " + (d / "x").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("unknown model 'gpt'") && Catch::Contains("bilstm-attention"));
  r = attn("train --csv " + kFixture + " --set nonsense=1 --out " + (d / "x").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("no config key 'nonsense'"));
  r = attn("train --csv a.csv --data b --out " + (d / "x").string());
  CHECK(r.code == 2);
  r = attn("train --data " + kRun + "/data --out " + kRun);
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("already holds a run") && Catch::Contains("--resume"));
  r = attn("explain --model " + write(d / "bad.pt", "not a model") + " hi");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("bad.pt: not a TorchScript model file"));
  r = attn("explain --model " + (d / "missing").string() + " hi");
  CHECK(r.code == 1);
  r = attn("train --resume " + d.string());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("config.json"));
  const std::string labels = write(d / "labels.csv", "id,toxic,severe_toxic,obscene,threat,insult,identity_hate\nm0000,0,0,7,0,0,0\n");
  r = attn("evaluate --model " + kRun + " --csv " + kFixture + " --labels-csv " + labels);
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("labels.csv:2: column 4 (obscene): label must be 0, 1 or -1"));
}

TEST_CASE("export writes a model that explains like the run", "[cli][export]") {
  const auto d = scratch("export");
  const std::string out = (d / "m.pt").string();
  REQUIRE(attn("export --model " + kRun + " --out " + out).code == 0);
  const auto a = attn("explain --json --model " + kRun + " \"you are stupid\"");
  const auto b = attn("explain --json --model " + out + " \"you are stupid\"");
  CHECK(a.code == 0);
  CHECK(a.out == b.out);
  const auto s = attn("summary --model " + kRun);
  CHECK_THAT(s.out, Catch::Contains("Bidirectional LSTM") && Catch::Contains("Total params"));
}

namespace {
const std::string kTiny = std::string(ATTN_TINY_RUN);

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
}  // namespace

TEST_CASE("feature-attention: explain rows, evaluate with mean attention and the seed's bar chart", "[cli][features]") {
  const auto d = scratch("features");
  const std::string run = kTiny + "/features", csv = kTiny + "/features.csv";
  auto r = attn("explain --model " + run + " --csv " + csv + " --rows 1,2 --svg " + (d / "rows.svg").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("P(label = 1) = 0.") && Catch::Contains("x1") && Catch::Contains("weight"));
  CHECK_THAT(read_text(d / "rows.svg"), Catch::StartsWith("<svg") && Catch::Contains("x5"));
  r = attn("explain --json --model " + run + " 0,1,1,0,0,0");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("\"features\":[{\"feature\":\"x0\",\"value\":0.0,\"weight\":"));
  r = attn("evaluate --model " + run + " --csv " + csv + " --svg " + (d / "mean.svg").string() + " --predictions " +
           (d / "p.csv").string());
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("\"accuracy\"") && Catch::Contains("\"mean_attention\"") && Catch::Contains("\"x5\""));
  CHECK_THAT(read_text(d / "mean.svg"), Catch::Contains("Mean attention per feature"));
  CHECK_THAT(read_text(d / "p.csv"), Catch::StartsWith("row,probability,prediction\n1,"));
  // Bad input: a row of the wrong width, a row number out of range, a column that is not a number.
  CHECK(attn("explain --model " + run + " 1,2").code == 2);
  CHECK(attn("explain --model " + run + " --csv " + csv + " --rows 999999").code == 2);
  const std::string bad = write(d / "bad.csv", "x0,x1,x2,x3,x4,x5,label\n1,2,3,4,5,6,1\n1,2,three,4,5,6,0\n");
  r = attn("evaluate --model " + run + " --csv " + bad);
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("bad.csv:3: column 3 (x2): expected a finite number, got 'three'"));
  r = attn("train --model feature-attention --csv " + bad + " --label-column y --out " + (d / "r").string());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("bad.csv") && Catch::Contains("'y'"));
  CHECK_FALSE(fs::exists(d / "r" / "config.json"));
  r = attn("train --model feature-attention --csv " + csv + " --feature-columns x0,label --out " + (d / "r").string());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("the label column 'label' cannot also be a feature"));
}

TEST_CASE("seq2seq-attention: explain draws the attention matrix, evaluate scores exact match", "[cli][seq2seq]") {
  const auto d = scratch("seq2seq");
  const std::string run = kTiny + "/dates";
  auto r =
      attn("explain --model " + run + " \"may 9, 1998\" \"9.5.98\" --svg " + (d / "a.svg").string() + " --html " + (d / "a.html").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("may 9, 1998 -> ") && Catch::Contains("may\xe2\x90\xa3"
                                                                          "9,"));
  CHECK_THAT(read_text(d / "a.svg"), Catch::StartsWith("<svg") && Catch::Contains("may 9, 1998 -&gt; "));
  CHECK(fs::exists(d / "a-2.svg"));
  CHECK_THAT(read_text(d / "a.html"), Catch::Contains("<svg"));
  r = attn("explain --json --model " + run + " \"1 jan 2000\"");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("\"source_tokens\":[\"1\",\" \",\"j\",\"a\",\"n\"") && Catch::Contains("\"attention\":["));
  r = attn("evaluate --model " + run + " --csv " + kTiny + "/dates.csv --predictions " + (d / "p.csv").string() + " --metrics " +
           (d / "m.json").string());
  REQUIRE(r.code == 0);
  CHECK_THAT(read_text(d / "m.json"), Catch::Contains("\"exact_match\"") && Catch::Contains("\"char_accuracy\""));
  CHECK_THAT(read_text(d / "p.csv"), Catch::StartsWith("source,target,prediction\n"));
  r = attn("evaluate --model " + run + " --csv " + kTiny + "/dates.csv --source-column text");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("dates.csv") && Catch::Contains("text"));
  r = attn("train --model seq2seq-attention --csv " + kTiny + "/dates.csv --source-column human --target-column machine " +
           "--set score=manhattan --out " + (d / "x").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("manhattan"));
  // A run keeps its own copy of the CSV: it resumes after the original is gone.
  fs::copy_file(kTiny + "/dates.csv", d / "mine.csv");
  r = attn("train --model seq2seq-attention --csv " + (d / "mine.csv").string() + " --source-column human " +
           "--target-column machine --set units=8 --set embed_dim=4 --epochs 1 --out " + (d / "r").string());
  REQUIRE(r.code == 0);
  fs::remove(d / "mine.csv");
  CHECK(fs::exists(d / "r" / "data" / "mine.csv"));
  r = attn("train --resume " + (d / "r").string() + " --epochs 2");
  CHECK(r.code == 0);
  CHECK_THAT(read_text(d / "r" / "metrics.jsonl"), Catch::Contains("\"epoch\":2"));
  r = attn("train --model seq2seq-attention --csv " + kTiny + "/dates.csv --source-column human --target-column machine " +
           "--set target_vocab=99 --out " + (d / "y").string());
  CHECK(r.code == 2);  // a setting the data contradicts is a bad setting
  CHECK_THAT(r.out, Catch::Contains("config key 'target_vocab' must be the data's"));
  CHECK_FALSE(fs::exists(d / "y" / "config.json"));
}

TEST_CASE("transformer-classifier: per-word pooling weights, and per-layer, per-head self-attention in --json", "[cli][transformer]") {
  const std::string run = kTiny + "/transformer";
  auto r = attn("explain --model " + run + " \"ice cream sucks\"");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("sucks") && Catch::Contains("toxic 0."));
  r = attn("explain --json --model " + run + " \"ice cream sucks\"");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const std::size_t n = j.at("ids").size();
  REQUIRE(j.at("self_attention").size() == 2);     // layers
  REQUIRE(j.at("self_attention")[0].size() == 2);  // heads
  CHECK(j.at("self_attention")[1][1].size() == n * n);
}

TEST_CASE("datagen: the seeds' data sets, bad settings are usage errors", "[cli][datagen][readers]") {
  const auto d = scratch("datagen");
  CHECK(attn("datagen features --rows 10 --dims 3 --informative 0 --out " + (d / "f.csv").string()).code == 0);
  CHECK_THAT(read_text(d / "f.csv"), Catch::StartsWith("x0,x1,x2,label\n"));
  CHECK(attn("datagen dates --rows 10 --locales en_US,de_DE --out " + (d / "d.csv").string()).code == 0);
  CHECK_THAT(read_text(d / "d.csv"), Catch::StartsWith("human,machine\n"));
  auto r = attn("datagen features --dims 3 --informative 3 --out " + (d / "x.csv").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("not in 0..2"));
  CHECK(attn("datagen dates --from-year 1500 --out " + (d / "x.csv").string()).code == 2);
  CHECK(attn("datagen dates --locales th_TH --rows 50 --out " + (d / "th.csv").string()).code == 0);
  // Gregorian years, not the Thai Buddhist calendar's (1950-2049 would be 2493-2592).
  CHECK_FALSE(std::regex_search(read_text(d / "th.csv"), std::regex(R"(25\d\d)")));
  r = attn("datagen dates --locales xx_YY --out " + (d / "x.csv").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("xx_YY"));
  CHECK_FALSE(fs::exists(d / "x.csv"));
}

TEST_CASE("every command of the list runs, and --help lists them all", "[cli]") {
  const auto help = attn("--help");
  for (const char* cmd :
       {"prepare", "tokenize", "train", "explain", "faithfulness", "evaluate", "export", "serve", "summary", "models", "plot", "datagen"}) {
    INFO(cmd);
    CHECK_THAT(help.out, Catch::Contains(std::string("  ") + cmd));
    CHECK(attn(std::string(cmd) + " --help").code == 0);
  }
}

TEST_CASE("train: the model's own training defaults, shown by --dump-config, flags override them", "[cli][train]") {
  auto r = attn("train --model feature-attention --dump-config");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("training").at("epochs") == 16);
  CHECK(j.at("training").at("batch_size") == 128);
  CHECK(j.at("training").at("val_split") == 0.3);
  CHECK(j.at("task") == "feature-classification");
  CHECK(j.at("model_config_set_from_data") == nlohmann::json::array({"features"}));
  r = attn("train --model bilstm-attention --set num_words=5000 --dump-config");  // a size the user set is theirs
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out).at("model_config_set_from_data") ==
        nlohmann::json::array({"labels", "output", "subword_buckets", "subword_skeletons"}));
  r = attn("train --model seq2seq-attention --epochs 2 --set score=dot --dump-config");
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j.at("training").at("epochs") == 2);
  CHECK(j.at("model_config").at("score") == "dot");
  CHECK_THAT(attn("models").out, Catch::Contains("training defaults: --epochs 16 --batch-size 128"));
}

TEST_CASE("an input of another task is a usage error naming the model", "[cli][train]") {
  const auto d = scratch("other_task");
  auto r = attn("train --csv " + kFixture + " --model bilstm-attention --feature-columns a,b --out " + (d / "x").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--feature-columns does not apply to bilstm-attention (a text-classification model)"));
  CHECK_FALSE(fs::exists(d / "x"));
  r = attn("explain --model " + kRun + " --svg x.svg hi");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--svg does not apply to bilstm-attention"));
  // Without --model, the inputs choose it: the first model whose task reads every one given.
  r = attn("train --csv " + kFixture + " --feature-columns a,b --dump-config");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out).at("model") == "feature-attention");
  r = attn("explain --model " + kRun + " --rows 1 hi");  // text models read --rows of a --csv
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--rows and --text-column need --csv"));
  r = attn("evaluate --model " + kTiny + "/features --csv " + kTiny + "/features.csv --labels-csv x.csv");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--labels-csv does not apply to feature-attention"));
  r = attn("train --resume " + kRun + " --lr 0.1");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("only --epochs may change"));
}

TEST_CASE("evaluate reports the metric vocabulary every surface shares", "[cli][evaluate]") {
  const auto d = scratch("vocabulary");
  REQUIRE(attn("evaluate --model " + kRun + " --csv " + kTiny + "/toxic.csv --metrics " + (d / "m.json").string()).code == 0);
  const auto m = nlohmann::json::parse(read_text(d / "m.json"));
  for (const char* key : {"loss", "accuracy", "auc", "mean_auc", "rows", "rows_skipped"}) CHECK(m.contains(key));
  CHECK(m.at("auc").is_object());
  CHECK(m.at("mean_auc").is_number());
  std::ifstream metrics(fs::path(kRun) / "metrics.jsonl");
  std::string line;
  std::getline(metrics, line);
  const auto epoch = nlohmann::json::parse(line);
  for (const char* key : {"loss", "accuracy", "val_loss", "val_accuracy", "val_auc", "val_mean_auc", "val_rows"})
    CHECK(epoch.contains(key));
}

TEST_CASE("attn plot draws every run's curves, and names a directory that is not a run", "[cli][plot]") {
  const auto d = scratch("plot");
  auto r = attn("plot " + kRun + " " + kTiny + "/transformer " + kTiny + "/dates --out " + (d / "c.svg").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const std::string svg = read_text(d / "c.svg");
  CHECK_THAT(svg, Catch::StartsWith("<svg") && Catch::Contains(">run<") && Catch::Contains(">transformer<") && Catch::Contains(">dates<"));
  r = attn("plot " + d.string() + " --out " + (d / "x.svg").string());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("metrics.jsonl: cannot open"));
  CHECK(attn("plot --out " + (d / "x.svg").string()).code == 2);
}

TEST_CASE("evaluate: per-label decision thresholds with precision, recall and F1, seq2seq beam search", "[cli][evaluate]") {
  const auto d = scratch("decisions");
  auto r = attn("evaluate --model " + kRun + " --csv " + kTiny + "/toxic.csv --thresholds auto --metrics " + (d / "m.json").string());
  REQUIRE(r.code == 0);
  const auto m = nlohmann::json::parse(read_text(d / "m.json"));
  for (const char* key : {"thresholds", "precision", "recall", "f1"}) CHECK(m.at(key).at("toxic").is_number());
  CHECK(attn("evaluate --model " + kRun + " --csv " + kTiny + "/toxic.csv --thresholds 0.5,0.5").code == 2);
  // Beam search against greedy decoding on dates the model never saw (another generator seed).
  REQUIRE(attn("datagen dates --rows 300 --seed 6 --out " + (d / "held_out.csv").string()).code == 0);
  r = attn("evaluate --model " + kTiny + "/dates --csv " + (d / "held_out.csv").string() + " --metrics " + (d / "g.json").string());
  REQUIRE(r.code == 0);
  r = attn("evaluate --model " + kTiny + "/dates --csv " + (d / "held_out.csv").string() + " --beam 3 --metrics " +
           (d / "b.json").string());
  REQUIRE(r.code == 0);
  const auto greedy = nlohmann::json::parse(read_text(d / "g.json")), beam = nlohmann::json::parse(read_text(d / "b.json"));
  CHECK(beam.at("beam") == 3);
  CHECK_FALSE(greedy.contains("beam"));
  CHECK(greedy.at("exact_match").get<double>() > 0.5);  // a model good enough for the comparison to mean something
  CHECK(beam.at("exact_match").get<double>() >= greedy.at("exact_match").get<double>());
  CHECK(beam.at("char_accuracy").get<double>() >= greedy.at("char_accuracy").get<double>() - 0.01);
  r = attn("explain --model " + kRun + " --beam 3 hi");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--beam does not apply to bilstm-attention"));
}

TEST_CASE("train: the Keras-style settings are checked before any work", "[cli][train]") {
  const auto d = scratch("keras_flags");
  const std::string csv = kTiny + "/features.csv";
  auto r = attn("train --model feature-attention --csv " + csv + " --lr-schedule triangle --out " + (d / "a").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--lr-schedule must be constant, reduce-on-plateau, warmup-linear or cosine"));
  r = attn("train --model feature-attention --csv " + csv + " --epochs many --out " + (d / "b").string());
  CHECK(r.code == 2);
  r = attn("train --model feature-attention --csv " + csv + " --freeze-embeddings --out " + (d / "c").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--freeze-embeddings needs --embeddings"));
  r = attn("train --model seq2seq-attention --csv " + kTiny +
           "/dates.csv --source-column human --target-column machine --pos-weight auto --out " + (d / "e").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--pos-weight is for classifiers"));
  const std::string vectors = write(d / "v.txt", "x0 1 2\n");
  r = attn("train --model feature-attention --csv " + csv + " --embeddings " + vectors + " --out " + (d / "f").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("feature-attention has no word embedding"));
  for (const char* run : {"a", "b", "c"}) CHECK_FALSE(fs::exists(d / run / "config.json"));
}

TEST_CASE("an empty CSV is an error naming it, before anything is written", "[cli][readers]") {
  const auto d = scratch("empty");
  const std::string csv = write(d / "empty.csv", kHeader);
  const auto r = attn("prepare --csv " + csv + " --out " + (d / "out").string());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("empty.csv: no data rows"));
  CHECK_FALSE(fs::exists(d / "out" / "data.pt"));
}

TEST_CASE("train refuses empty data, naming the file", "[cli][train]") {
  const auto d = scratch("empty_train");
  for (const auto& [csv, model] :
       std::vector<std::pair<std::string, std::string>>{{write(d / "t.csv", kHeader), "bilstm-attention"},
                                                        {write(d / "f.csv", "x0,x1,label\n"), "feature-attention"},
                                                        {write(d / "s.csv", "source,target\n"), "seq2seq-attention"}}) {
    const auto r = attn("train --model " + model + " --csv " + csv + " --out " + (d / model).string());
    INFO(model << ": " << r.out);
    CHECK(r.code == 1);
    CHECK_THAT(r.out, Catch::Contains(csv) && Catch::Contains("no data rows"));
    CHECK_FALSE(fs::exists(d / model / "config.json"));
  }
}

namespace {
/// attn under a file-size limit (bash's ulimit -f, in KiB): writes beyond it fail with EFBIG.
Run attn_limited(const std::string& args, int kib) { return attn("__limited__ " + std::to_string(kib) + " " + args); }
}  // namespace

TEST_CASE("a write that fails midway (ulimit -f) keeps the previous files and says why", "[cli][train]") {
  const auto d = scratch("limited");
  // export over an existing model: the old one stays whole
  const std::string out = (d / "m.pt").string();
  REQUIRE(attn("export --model " + kRun + " --out " + out).code == 0);
  const std::string before = read_text(out);
  auto r = attn_limited("export --model " + kTiny + "/transformer --out " + out, 100);
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("m.pt") && Catch::Contains("cannot write"));
  CHECK(read_text(out) == before);
  // a run's checkpoint and model when an epoch's files cannot be written
  fs::copy(kTiny + "/features", d / "features", fs::copy_options::recursive);
  const std::string checkpoint = read_text(d / "features" / "checkpoint.pt"), model = read_text(d / "features" / "model.pt");
  r = attn_limited("train --resume " + (d / "features").string() + " --epochs 9", 2);
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("config.json") || Catch::Contains("checkpoint.pt") || Catch::Contains("metrics.jsonl") ||
                        Catch::Contains("model.pt"));
  CHECK(read_text(d / "features" / "checkpoint.pt") == checkpoint);
  CHECK(read_text(d / "features" / "model.pt") == model);
  int temporaries = 0;
  for (const auto& e : fs::directory_iterator(d / "features")) temporaries += e.path().string().find(".tmp") != std::string::npos;
  CHECK(temporaries == 0);
  // prepare's three files: all or none
  r = attn_limited("prepare --csv " + kTiny + "/toxic.csv --out " + (d / "p").string(), 200);
  CHECK(r.code == 1);
  CHECK_FALSE(fs::exists(d / "p" / "data.pt"));
}

TEST_CASE("a full disk and a directory that cannot be written to are clear errors, nothing is left half-written", "[cli][train]") {
  // A full device (/dev/full answers every write with ENOSPC), written in place as devices are.
  auto r = attn("export --model " + kRun + " --out /dev/full");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("/dev/full: cannot write: No space left on device"));
  r = attn("evaluate --model " + kRun + " --csv " + kTiny + "/toxic.csv --predictions /dev/full");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("No space left on device"));
  // A run directory whose files may not be replaced: an immutable directory (chattr +i, which binds
  // root too), where it can be made; the run stays as it was.
  const auto d = scratch("readonly");
  fs::copy(kTiny + "/features", d / "features", fs::copy_options::recursive);
  const std::string dir = (d / "features").string(), model = read_text(d / "features" / "model.pt");
  if (std::system(("chattr +i " + dir + " 2>/dev/null").c_str()) != 0) {
    if (::geteuid() == 0) {
      WARN("chattr +i is not supported here: the read-only directory case is not run");
      return;
    }
    fs::permissions(d / "features", fs::perms::owner_read | fs::perms::owner_exec);  // not root: permissions bind
  }
  r = attn("train --resume " + dir + " --epochs 9");
  std::system(("chattr -i " + dir + " 2>/dev/null").c_str());
  fs::permissions(d / "features", fs::perms::owner_all);
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("cannot write") || Catch::Contains("cannot replace"));
  CHECK(read_text(d / "features" / "model.pt") == model);
}

TEST_CASE("SIGTERM during training is Ctrl-C: checkpoint, exit 130, and --resume ends as an uninterrupted run", "[cli][train]") {
  const auto d = scratch("sigterm");
  REQUIRE(attn("datagen toxic --rows 2000 --seed 9 --out " + (d / "t.csv").string()).code == 0);
  const std::string train =
      "train --csv " + (d / "t.csv").string() + " --epochs 3 --batch-size 16 --set embed_dim=8 --set lstm_units=4 --threads 1 --out ";
  REQUIRE(attn(train + (d / "whole").string()).code == 0);
  // The same run set to 1,000 epochs, stopped by SIGTERM as soon as its first epoch's line is out
  // (read from a FIFO as it is printed: no polling, and 999 epochs to go, so the signal always
  // lands during training); --resume --epochs 3 then ends it where the whole run ended.
  const std::string log = (d / "log").string(), fifo = (d / "out.fifo").string();
  const std::string script = "mkfifo " + fifo + "; " + std::string(ATTN_BINARY) + " " + train + (d / "cut").string() + " --epochs 1000 > " +
                             fifo + " 2>&1 & pid=$!; " + "while IFS= read -r line; do printf '%s\\n' \"$line\" >> " + log +
                             "; case \"$line\" in *'epoch 1/1000'*) kill -TERM $pid;; esac; done < " + fifo +
                             "; wait $pid; echo \"exit=$?\"";
  FILE* p = popen(("bash " + write(d / "stop.sh", script)).c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  CHECK_THAT(out, Catch::Contains("exit=130"));
  const std::string said = read_text(log);
  CHECK_THAT(said, Catch::Contains("interrupted: checkpoint saved") && Catch::Contains("attn train --resume"));
  CHECK(fs::exists(d / "cut" / "checkpoint.pt"));
  const auto r = attn("train --resume " + (d / "cut").string() + " --epochs 3");
  CHECK(r.code == 0);
  const auto last_line = [](const fs::path& metrics) {
    std::ifstream in(metrics);
    std::string line, last;
    while (std::getline(in, line)) last = line;
    auto j = nlohmann::json::parse(last);
    j.erase("seconds"), j.erase("rows_per_second");  // the clock's
    return j;
  };
  CHECK(last_line(d / "cut" / "metrics.jsonl") == last_line(d / "whole" / "metrics.jsonl"));
}
