// Identity terms, their mentions and swaps, and the audit's templates (see identity_terms.h).
#include "attn/text/identity_terms.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>

#include "draws.h"

namespace attn::text {
namespace {

bool ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool ascii_upper(char c) { return c >= 'A' && c <= 'Z'; }
char lower(char c) { return ascii_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }
char upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

/// A character that continues a word: an ASCII letter or digit, or a byte of a non-ASCII character.
bool word_byte(char c) { return ascii_letter(c) || (c >= '0' && c <= '9') || (static_cast<unsigned char>(c) & 0x80); }

/// `to` written in the case of `mention`.
std::string in_case_of(const std::string& mention, const std::string& to) {
  std::size_t letters = 0, capitals = 0;
  for (char c : mention) letters += ascii_letter(c), capitals += ascii_upper(c);
  std::string out = to;
  if (letters > 1 && capitals == letters) {
    for (char& c : out) c = upper(c);
  } else if (!mention.empty() && ascii_upper(mention[0]) && !out.empty()) {
    out[0] = upper(out[0]);
  }
  return out;
}

}  // namespace

const std::vector<std::string>& builtin_identity_terms() {
  // Sexual orientation and gender identity, religion, race and origin, gender: the groups the 2019
  // competition scored, several words for each.
  static const std::vector<std::string> terms = {"lesbian",    "gay",          "bisexual", "transgender", "queer",  "straight",
                                                 "homosexual", "heterosexual", "muslim",   "christian",   "jewish", "hindu",
                                                 "buddhist",   "catholic",     "atheist",  "black",       "white",  "asian",
                                                 "african",    "latino",       "mexican",  "chinese",     "female", "male"};
  return terms;
}

std::vector<std::string> read_identity_terms(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open the term list");
  std::vector<std::string> terms;
  std::map<std::string, std::size_t> seen;  // term -> its line
  std::size_t line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const std::string where = path + " line " + std::to_string(line_no) + ": ";
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty()) throw std::runtime_error(where + "an empty line (one term per line)");
    for (char& c : line) {
      if (!ascii_letter(c) && c != ' ')
        throw std::runtime_error(where + "'" + line + "': a term is ASCII letters (several words: separated by a space)");
      c = lower(c);
    }
    if (line.front() == ' ' || line.find("  ") != std::string::npos)
      throw std::runtime_error(where + "'" + line + "': one space between a term's words, none before");
    if (const auto it = seen.find(line); it != seen.end())
      throw std::runtime_error(where + "'" + line + "' repeats line " + std::to_string(it->second));
    seen.emplace(line, line_no);
    terms.push_back(line);
  }
  if (terms.size() < 2) throw std::runtime_error(path + ": terms are compared with each other: at least 2 are needed (one per line)");
  return terms;
}

std::vector<Mention> find_mentions(const std::string& text, const std::string& term) {
  std::vector<Mention> out;
  if (term.empty()) return out;
  for (std::size_t at = 0; at + term.size() <= text.size(); ++at) {
    if (at > 0 && word_byte(text[at - 1])) continue;
    std::size_t k = 0;
    while (k < term.size() && lower(text[at + k]) == term[k]) ++k;
    if (k < term.size()) continue;
    std::size_t end = at + term.size();
    const std::size_t after = end < text.size() && lower(text[end]) == 's' ? end + 1 : end;  // the plural "s"
    if (after < text.size() && word_byte(text[after])) continue;
    out.push_back({at, end});
    at = after - 1;
  }
  return out;
}

std::string swap_term(const std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  std::size_t done = 0;
  for (const Mention& m : find_mentions(text, from)) {
    out.append(text, done, m.begin - done);
    out += in_case_of(text.substr(m.begin, m.end - m.begin), to);
    done = m.end;
  }
  return out.append(text, done, std::string::npos);
}

std::optional<std::string> counterfactual_copy(const std::string& text, const std::vector<std::string>& terms, std::uint64_t seed) {
  std::vector<std::size_t> mentioned;
  for (std::size_t i = 0; i < terms.size(); ++i)
    if (!find_mentions(text, terms[i]).empty()) mentioned.push_back(i);
  if (mentioned.empty() || terms.size() < 2) return std::nullopt;
  Draws draws(seed);
  const std::size_t from = mentioned[draws.below(mentioned.size())];
  std::size_t to = draws.below(terms.size() - 1);  // any term but `from`
  if (to >= from) ++to;
  return swap_term(text, terms[from], terms[to]);
}

std::vector<TemplateSentence> template_sentences(const std::string& term) {
  // {T}: the term; {F}: the filler. Adjective frames take adjectives, verb frames verbs; each frame
  // takes every filler of its kind, toxic and not, so half the sentences are toxic.
  static const char* const kAdjectiveFrames[] = {"{T} people are {F}.",
                                                 "My new neighbour is {T} and very {F}.",
                                                 "Being {T} makes you {F}.",
                                                 "Every {T} person I have met was {F}.",
                                                 "She said her {T} friends are {F}.",
                                                 "The {T} students in my class are {F}."};
  static const char* const kVerbFrames[] = {"I {F} {T} people.", "Honestly, we all {F} the {T} community."};
  static const char* const kToxicAdjectives[] = {"stupid", "disgusting", "worthless", "pathetic", "evil", "filthy", "dumb", "vile"};
  static const char* const kKindAdjectives[] = {"kind", "friendly", "honest", "wonderful", "smart", "helpful", "lovely", "funny"};
  static const char* const kToxicVerbs[] = {"hate", "despise", "loathe", "detest"};
  static const char* const kKindVerbs[] = {"love", "respect", "admire", "like"};
  std::vector<TemplateSentence> out;
  const auto fill = [&](const std::string& frame, const std::string& filler, bool toxic) {
    TemplateSentence s;
    s.toxic = toxic;
    const std::size_t t = frame.find("{T}");
    std::string term_text = term;
    if (t == 0 && !term_text.empty()) term_text[0] = upper(term_text[0]);
    s.text = frame;
    s.text.replace(t, 3, term_text);
    s.first_word = static_cast<std::size_t>(std::count(s.text.begin(), s.text.begin() + static_cast<std::ptrdiff_t>(t), ' '));
    s.words = static_cast<std::size_t>(std::count(term.begin(), term.end(), ' ')) + 1;
    s.text.replace(s.text.find("{F}"), 3, filler);
    s.filler = filler;
    out.push_back(std::move(s));
  };
  for (const char* frame : kAdjectiveFrames)
    for (std::size_t i = 0; i < std::size(kToxicAdjectives); ++i)
      fill(frame, kToxicAdjectives[i], true), fill(frame, kKindAdjectives[i], false);
  for (const char* frame : kVerbFrames)
    for (std::size_t i = 0; i < std::size(kToxicVerbs); ++i) fill(frame, kToxicVerbs[i], true), fill(frame, kKindVerbs[i], false);
  return out;
}

}  // namespace attn::text
