#pragma once
/// Plausibility: how far an importance method's word scores agree with the words people marked as
/// the reason (data/rationales.h), by ERASER's metrics (DeYoung et al. 2020), as HateXplain reports
/// them. A method's hard rationale is its top-k words, each its own span.
///   IOU-F1:   a predicted span matches when its IoU with some marked span is >= 0.5; per row,
///             precision = matches / predicted spans and recall = matches / marked spans (which may
///             pass 1, as ERASER counts); the F1 of their means over the rows.
///   token-F1: the mean over rows of each row's F1 of the hard rationale's words against the marked.
///   AUPRC:    the mean over rows of the area under the precision-recall curve of the soft scores
///             (scikit-learn's precision_recall_curve, then the trapezoid rule, as ERASER computes it).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/models/methods.h"

namespace attn::analyses {

/// One row's scores per word and the words people marked (as spans [first, last) of words).
struct RationaleScores {
  std::vector<float> scores;
  std::vector<std::uint8_t> marked;
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
};

/// The positions of the k highest scores (ties: the later position first), in position order;
/// every position when there are at most k.
std::vector<std::int64_t> hard_rationale(const std::vector<float>& scores, std::int64_t k);
/// F1 of `predicted` positions against the marked ones (0 when both are empty).
double token_f1(const std::vector<std::int64_t>& predicted, const std::vector<std::uint8_t>& marked);
/// Area under scikit-learn's precision-recall curve of `scores` against `marked` (trapezoid rule).
double auprc(const std::vector<float>& scores, const std::vector<std::uint8_t>& marked);

struct PlausibilityFigures {
  double iou_f1 = 0, iou_precision = 0, iou_recall = 0;
  double token_f1 = 0;
  double auprc = 0;
};
/// ERASER's three figures over rows (each with at least one marked span).
PlausibilityFigures plausibility_of(const std::vector<RationaleScores>& rows, std::int64_t k);
/// The same figures for the marks themselves taken as a method's scores (1 on a marked word, 0
/// elsewhere): what a method that agrees with people exactly would score. AUPRC is 1; IOU-F1 and
/// token-F1 stay below 1 where rows mark more than k words or spans longer than two words, so this
/// is the reach of the hard-rationale figures on a file, against which a method's are read.
PlausibilityFigures marks_as_scores(std::vector<RationaleScores> rows, std::int64_t k);

/// One explanation (attn explain's JSON of a text, with "word_importance") against the words people
/// marked, given as positions among its "words": per label and method, ERASER's three figures with
/// the top-k words (a word the model has no token for scores lowest). {"rationale", "top_k",
/// "by_label": {LABEL: {METHOD: {"iou_f1", "token_f1", "auprc"}}}} ("by_label" is empty without a
/// marked word or without word_importance). A position outside the words: std::invalid_argument
/// naming `field`[j].
nlohmann::ordered_json explanation_plausibility(const nlohmann::ordered_json& explanation, const std::vector<std::int64_t>& marked_words,
                                                std::int64_t k, const std::string& field);

/// `attn plausibility`: a text model's methods against a file of human rationales.
struct PlausibilityRequest {
  std::string model;
  std::string rationales;               ///< ERASER annotations (JSON Lines or an array) or a Toxic Spans CSV (.csv)
  std::string docs;                     ///< ERASER's docs file ("": docs.jsonl beside the annotations)
  std::vector<models::Method> methods;  ///< none: attention and every other method the model gives
  int steps = models::kDefaultSteps;
  std::int64_t top_k = 5;
  std::string label;      ///< explained for every row ("": the row's class when it is the model's, else the most probable)
  std::int64_t rows = 0;  ///< the first this many rows with a rationale (0: all)
  std::int64_t batch_size = 64;
  std::string json;  ///< the figures and each row's, as JSON ("" = none)
};
/// Explains the rows, scores each method, writes the JSON; returns the table to print.
std::string plausibility(const PlausibilityRequest& request);

}  // namespace attn::analyses
