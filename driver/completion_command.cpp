//===- driver/completion_command.cpp - `kiln completion` ------------------===//

#include "driver/completion_command.h"

#include "driver/visible_commands.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>

#include <string>
#include <vector>

namespace kiln::driver {

namespace {

struct CompletedOption {
  std::string name; ///< "--emit" or "-o"
  std::string description;
  bool takesValue = false;
};

/// One command of the tree: `build`, `cache prune`...
struct CompletedCommand {
  std::vector<std::string> path; ///< empty for kiln itself
  std::string description;
  std::vector<std::string> subcommands;
  std::vector<CompletedOption> options;
  bool takesArguments = false; ///< files, folders, names
};

void collect(const CLI::App &app, std::vector<std::string> path,
             std::vector<CompletedCommand> &commands) {
  CompletedCommand command;
  command.path = path;
  command.description = app.get_description();
  for (const CLI::Option *option : app.get_options()) {
    if (option->get_positional()) {
      command.takesArguments = true;
      continue;
    }
    bool takesValue = option->get_items_expected_min() > 0;
    for (const std::string &name : option->get_lnames())
      command.options.push_back({"--" + name, option->get_description(), takesValue});
    for (const std::string &name : option->get_snames())
      command.options.push_back({"-" + name, option->get_description(), takesValue});
  }
  std::vector<const CLI::App *> children = visibleSubcommands(app);
  for (const CLI::App *child : children)
    command.subcommands.push_back(child->get_name());
  commands.push_back(std::move(command));
  for (const CLI::App *child : children) {
    std::vector<std::string> childPath = path;
    childPath.push_back(child->get_name());
    collect(*child, childPath, commands);
  }
}

std::string joinNames(const std::vector<CompletedOption> &options) {
  std::vector<std::string> names;
  for (const CompletedOption &option : options)
    names.push_back(option.name);
  return llvm::join(names, " ");
}

/// Single quotes for the shells: what `'` would end is written '\''.
std::string shellQuoted(llvm::StringRef text) {
  std::string out = "'";
  for (char c : text)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void writeBash(const std::vector<CompletedCommand> &commands, llvm::raw_ostream &os) {
  os << "# kiln completion for bash, written by `kiln completion bash`: source it, or\n"
        "# save it as ~/.local/share/bash-completion/completions/kiln.\n"
        "_kiln() {\n"
        "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" path=\"\" i\n"
        "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
        "    case \"$path/${COMP_WORDS[i]}\" in\n";
  std::vector<std::string> paths;
  for (const CompletedCommand &command : commands)
    if (!command.path.empty())
      paths.push_back("/" + llvm::join(command.path, "/"));
  os << "      " << llvm::join(paths, " | ") << ") path=\"$path/${COMP_WORDS[i]}\" ;;\n"
     << "    esac\n"
        "  done\n"
        "  local commands=\"\" options=\"\" files=0\n"
        "  case \"$path\" in\n";
  for (const CompletedCommand &command : commands) {
    os << "    " << shellQuoted(command.path.empty() ? "" : "/" + llvm::join(command.path, "/"))
       << ") commands=" << shellQuoted(llvm::join(command.subcommands, " "))
       << " options=" << shellQuoted(joinNames(command.options))
       << " files=" << (command.takesArguments ? 1 : 0) << " ;;\n";
  }
  os << "  esac\n"
        "  if [[ \"$cur\" == -* ]]; then\n"
        "    COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))\n"
        "  else\n"
        "    COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\"))\n"
        "    if ((files)); then\n"
        "      COMPREPLY+=($(compgen -f -- \"$cur\"))\n"
        "    fi\n"
        "  fi\n"
        "}\n"
        "complete -o filenames -F _kiln kiln\n";
}

void writeFish(const std::vector<CompletedCommand> &commands, llvm::raw_ostream &os) {
  os << "# kiln completion for fish, written by `kiln completion fish`: save it as\n"
        "# ~/.config/fish/completions/kiln.fish.\n"
        "complete -c kiln -f\n";
  for (const CompletedCommand &command : commands) {
    // Where the command line stands: after exactly this command's words.
    std::string condition;
    if (command.path.empty()) {
      condition = "__fish_use_subcommand";
    } else {
      std::vector<std::string> seen;
      for (const std::string &word : command.path)
        seen.push_back("__fish_seen_subcommand_from " + word);
      condition = llvm::join(seen, "; and ");
    }
    for (const std::string &subcommand : command.subcommands) {
      std::string description;
      for (const CompletedCommand &child : commands)
        if (child.path.size() == command.path.size() + 1 && child.path.back() == subcommand &&
            std::equal(command.path.begin(), command.path.end(), child.path.begin()))
          description = child.description;
      os << "complete -c kiln -n " << shellQuoted(condition) << " -a " << subcommand << " -d "
         << shellQuoted(description) << "\n";
    }
    for (const CompletedOption &option : command.options) {
      llvm::StringRef name(option.name);
      os << "complete -c kiln -n " << shellQuoted(condition)
         << (name.starts_with("--") ? " -l " + name.drop_front(2).str()
                                    : " -s " + name.drop_front(1).str())
         << (option.takesValue ? " -r" : "") << " -d " << shellQuoted(option.description) << "\n";
    }
    if (command.takesArguments && !command.path.empty())
      os << "complete -c kiln -n " << shellQuoted(condition) << " -F\n";
  }
}

} // namespace

void writeCompletion(const CLI::App &app, llvm::StringRef shell, llvm::raw_ostream &os) {
  std::vector<CompletedCommand> commands;
  collect(app, {}, commands);
  if (shell == "fish")
    return writeFish(commands, os);
  if (shell == "zsh")
    os << "# kiln completion for zsh, written by `kiln completion zsh`: source it from\n"
          "# ~/.zshrc. It is the bash completion, under zsh's bashcompinit.\n"
          "autoload -U +X bashcompinit && bashcompinit\n";
  writeBash(commands, os);
}

} // namespace kiln::driver
