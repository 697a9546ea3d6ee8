// A text classifier's training inputs: declared once, read once, typed; the rules between them; what the model decides.
#include "tasks/text_training.h"
#include "attn/models/registry.h"
#include "attn/text/identity_terms.h"
#include "tasks_test_util.h"

using namespace attn;

namespace {
data::Inputs inputs(const std::vector<std::pair<std::string, std::string>>& given) {
  return tasks_test::train_inputs(tasks::task_for(models::ModelKind::kTextClassifier), given);
}
tasks::TextTrainingInputs read(const std::vector<std::pair<std::string, std::string>>& given,
                               const std::string& model = "bilstm-attention") {
  return tasks::read_text_training(inputs(given), models::find_model(model));
}
}  // namespace

TEST_CASE("text training inputs: each declared once, in --help's order, with --data first", "[tasks][text][training]") {
  const auto specs = tasks::text_training_specs();
  REQUIRE(specs.size() == 20);
  CHECK(specs.front().name == "data");
  CHECK(specs.back().name == "max-words");
  const auto train = tasks::task_for(models::ModelKind::kTextClassifier).inputs(tasks::Command::kTrain);
  CHECK(train[0].name == "csv");
  CHECK(train[1].name == "data");
  CHECK(train[2].name == "val-csv");
  for (const auto& s : specs)
    CHECK(std::count_if(train.begin(), train.end(), [&](const data::InputSpec& t) { return t.name == s.name; }) == 1);
}

TEST_CASE("text training inputs: typed values and what the model decides", "[tasks][text][training]") {
  const tasks::TextTrainingInputs plain = read({{"csv", "x.csv"}});
  CHECK_FALSE(plain.reads_subwords);  // 0/1 labels read whole words unless asked
  CHECK(plain.rationale_weight.value == 1);
  CHECK(plain.misspell.value == 0);
  CHECK(plain.edits.size() == 6);  // the first six edits by default (the evasions added since stay unseen)
  CHECK(plain.layout.max_sentences == 0);
  // One class per row reads subwords by default, when the model has the table; --word-only says no.
  CHECK(read({{"csv", "x.csv"}, {"label-column", "label"}}).reads_subwords);
  CHECK_FALSE(read({{"csv", "x.csv"}, {"label-column", "label"}, {"word-only", ""}}).reads_subwords);
  CHECK_FALSE(read({{"csv", "x.csv"}, {"label-column", "label"}}, "hierarchical-attention").reads_subwords);
  const tasks::TextTrainingInputs typed = read({{"csv", "x.csv"},
                                                {"subwords", ""},
                                                {"subword-buckets", "1024"},
                                                {"misspell", "0.3"},
                                                {"misspell-edits", "leet,mask"},
                                                {"identity-weighting", ""},
                                                {"identities", "muslim,jewish"}});
  CHECK(typed.subword_buckets.value == 1024);
  CHECK(typed.misspell.value == 0.3);
  CHECK(typed.edits.size() == 2);
  CHECK(typed.identities.value == std::vector<std::string>{"muslim", "jewish"});
  const tasks::TextTrainingInputs spans = read({{"csv", "x.csv"}, {"rationales", "r.csv"}, {"rationale-target", "spans"}});
  CHECK(spans.target == tasks::RationaleTarget::kSpans);
  CHECK(read({{"csv", "x.csv"}, {"max-sentences", "8"}}, "hierarchical-attention").layout.max_sentences == 8);
  // --counterfactual swaps the built-in identity terms unless given a list, with lambda 1 unless given one.
  CHECK(plain.terms.empty());
  const tasks::TextTrainingInputs pairing = read({{"csv", "x.csv"}, {"counterfactual", ""}});
  CHECK(pairing.terms == text::builtin_identity_terms());
  CHECK(pairing.counterfactual_weight.value == 1);
  CHECK(read({{"csv", "x.csv"}, {"counterfactual", ""}, {"counterfactual-weight", "5"}}).counterfactual_weight.value == 5);
}

TEST_CASE("text training inputs: bad values and combinations name the flags", "[tasks][text][training]") {
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"subwords", ""}, {"word-only", ""}}), "give one of --subwords and --word-only");
  CHECK_THROWS_WITH(read({{"data", "d"}, {"subwords", ""}}), "--subwords re-reads the texts: give the CSV (--csv), not --data");
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"rationale-docs", "d.jsonl"}}), "--rationale-docs applies with --rationales");
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"identities", "muslim"}}), "--identities applies with --identity-weighting");
  CHECK_THROWS_WITH(read({{"data", "d"}, {"aux-labels", "a"}}), "--aux-labels reads columns of the CSV: give the CSV (--csv), not --data");
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"data", "d"}}), "give one of --csv and --data");
  CHECK_THROWS_WITH(read({{"data", "d"}, {"maxlen", "9"}}), "--maxlen prepares a --csv; the data in --data was prepared already");
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"subword-buckets", "9"}}), "--subword-buckets applies with --subwords");
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"skeletons", ""}}), "--skeletons applies with --subwords");
  CHECK(read({{"csv", "x.csv"}, {"subwords", ""}, {"skeletons", ""}}).skeletons.value);
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"subwords", ""}, {"subword-buckets", "0"}}), Catch::Contains("--subword-buckets must be in"));
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"subwords", ""}}, "hierarchical-attention"), Catch::Contains("has no subword embedding"));
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"misspell", "1.5"}}), "--misspell must be in 0..1, got '1.5'");
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"misspell", "0.2"}}), Catch::Contains("--misspell applies to a model reading subwords"));
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"misspell-edits", "leet"}}), "--misspell-edits applies with --misspell");
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"subwords", ""}, {"misspell", "0.2"}, {"rationales", "r"}}),
                    "give one of --misspell and --rationales");
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"rationales", "r"}, {"rationale-weight", "-1"}}),
                    "--rationale-weight: '-1' is not a number >= 0");
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"rationales", "r"}, {"rationale-target", "tokens"}}),
                    "--rationale-target: 'tokens' is not words or spans");
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"max-words", "5"}}),
                    "--max-words applies to hierarchical models; bilstm-attention reads words");
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"max-words", "0"}}, "hierarchical-attention"), Catch::Contains("--max-words must be in 1.."));
  CHECK_THROWS_WITH(read({{"data", "d"}}, "hierarchical-attention"), Catch::Contains("reads the texts' sentences"));
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"counterfactual-weight", "2"}}), "--counterfactual-weight applies with --counterfactual");
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"counterfactual-terms", "t.txt"}}), "--counterfactual-terms applies with --counterfactual");
  CHECK_THROWS_WITH(read({{"data", "d"}, {"counterfactual", ""}}), "--counterfactual re-reads the texts: give the CSV (--csv), not --data");
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"counterfactual", ""}, {"counterfactual-weight", "0"}}),
                    "--counterfactual-weight: '0' is not a number > 0");
  CHECK_THROWS_WITH(read({{"csv", "x.csv"}, {"counterfactual", ""}, {"counterfactual-terms", "/nonexistent/terms.txt"}}),
                    Catch::Contains("/nonexistent/terms.txt"));
}
