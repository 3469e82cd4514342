// pacheck: the main executable, with the conventions every subcommand shares: usage errors exit 2 suggesting a near
// miss, `--version`, `help [COMMAND]`, defaults in every --help, no exception escaping as an abort.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace {

using pacheck::cli::did_you_mean;
using pacheck::cli::printable;

constexpr int kUsageError = 2;

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

// The first word must name a subcommand or be --help or --version: a typo gets the nearest name and no word the list
// of commands, not CLI11's "A subcommand is required", which hides the typo.
bool known_subcommand(const CLI::App& app, int argc, char** argv) {
  const std::vector<std::string> names = subcommand_names(app);
  std::string listed;
  for (const std::string& name : names) listed += (listed.empty() ? "" : ", ") + name;
  if (argc < 2) {
    std::cerr << "error: no command given; the commands: " << listed << "\nRun `pacheck help` for what each does.\n";
    return false;
  }
  const std::string word = argv[1];
  if (word[0] == '-') {
    const std::vector<std::string> options = {"--help", "-h", "--version"};
    if (std::find(options.begin(), options.end(), word) != options.end()) return true;
    std::cerr << "error: '" << printable(word) << "' is not a pacheck option"
              << did_you_mean(word, options) << "\nRun `pacheck help` for the commands.\n";
    return false;
  }
  for (const std::string& name : names)
    if (name == word) return true;
  std::cerr << "error: '" << printable(word) << "' is not a pacheck command" << did_you_mean(word, names)
            << "\nRun `pacheck help` for the commands.\n";
  return false;
}

// For options CLI11 did not expect, the nearest option of the subcommand being parsed.
std::string option_suggestions(const CLI::App& app, const std::string& message) {
  const CLI::App* command = &app;
  for (const CLI::App* sub : app.get_subcommands()) command = sub;
  std::vector<std::string> options;
  for (const CLI::Option* option : command->get_options())
    for (const std::string& name : option->get_lnames()) options.push_back("--" + name);
  const std::size_t colon = message.find(':');  // the words after it are what was not expected
  if (colon == std::string::npos) return "";
  std::istringstream words(message.substr(colon + 1));
  std::string hints;
  for (std::string word; std::getline(words, word, ' ');) {
    word.resize(std::min(word.find('='), word.size()));
    if (word.rfind("--", 0) != 0) continue;
    const std::string near = pacheck::cli::nearest_name(word, options);
    if (!near.empty() && near != word) hints += "did you mean " + near + " instead of " + word + "?\n";
  }
  return hints;
}

// " COMMAND" for the subcommand being parsed when the error came, "" before one was named.
std::string help_topic_of(const CLI::App& app) {
  std::string topic;
  for (const CLI::App* sub : app.get_subcommands())
    if (sub->get_name() != "help") topic = " " + sub->get_name();
  return topic;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pacheck: property-based and differential testing of paged-attention kernels against an exact oracle"};
  app.set_version_flag("--version", "pacheck " PACHECK_VERSION);
  app.option_defaults()->always_capture_default();
  app.require_subcommand(1);
  pacheck::cli::add_commands(app);

  std::string help_topic;
  CLI::App* help = app.add_subcommand("help", "Print the commands, or one command's options: pacheck help COMMAND");
  help->add_option("command", help_topic, "The command");
  help->callback([&app, &help_topic] {
    if (help_topic.empty()) {
      std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
      return;
    }
    for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      if (sub->get_name() == help_topic) {
        std::cout << sub->help();
        return;
      }
    throw CLI::ValidationError("help", "'" + help_topic + "' is not a pacheck command");
  });

  if (!known_subcommand(app, argc, argv)) return kUsageError;
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {  // a command that printed its own error and chose its exit status
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "error: " << printable(e.what()) << "\n";  // the message quotes what was typed
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr)
      std::cerr << printable(option_suggestions(app, e.what()));
    const std::string topic = help_topic_of(app);
    std::cerr << "Run `pacheck help" << topic << "` for " << (topic.empty() ? "the commands" : "its options") << ".\n";
    return kUsageError;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << printable(e.what()) << "\n";
    return 1;
  }
  return pacheck::cli::exit_code();
}
