// Loads a model.pt trained by `attn train` and explains sentences with it: which words (features,
// characters) the model attended to, as `attn explain` prints them.
//   explain_sentence runs/toxic/model.pt "ice cream sucks" ["another sentence" ...]
#include <iostream>
#include <vector>

#include "attn/tasks/task.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: explain_sentence MODEL.pt SENTENCE...\n";
    return 2;
  }
  try {
    const auto model = attn::tasks::open_model(argv[1]);
    std::vector<attn::tasks::Input> inputs;
    for (int i = 2; i < argc; ++i) inputs.push_back({argv[i], {}});
    const auto explanations = model->explain(inputs);
    for (std::size_t i = 0; i < explanations->size(); ++i) std::cout << explanations->text(i);
  } catch (const std::exception& e) {
    std::cerr << "explain_sentence: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
