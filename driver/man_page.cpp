//===- driver/man_page.cpp - kiln(1) from the command line ----------------===//

#include "driver/man_page.h"

#include "driver/visible_commands.h"
#include "pipeline/version.h"

#include <llvm/ADT/StringExtras.h>

#include <string>
#include <vector>

namespace kiln::driver {

namespace {

/// `text` safe in troff: backslashes doubled, and a leading dot or quote
/// (which would start a request) escaped.
std::string escaped(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\''))
    out.insert(0, "\\&");
  return out;
}

std::string optionNames(const CLI::Option &option) {
  std::vector<std::string> names;
  for (const std::string &name : option.get_snames())
    names.push_back("\\fB\\-" + escaped(name) + "\\fR");
  for (const std::string &name : option.get_lnames())
    names.push_back("\\fB\\-\\-" + escaped(name) + "\\fR");
  std::string text = llvm::join(names, ", ");
  if (option.get_items_expected_min() > 0)
    text += " \\fI" + escaped(option.get_type_name().empty() ? "VALUE" : option.get_type_name()) +
            "\\fR";
  return text;
}

void writeCommand(const CLI::App &command, const std::string &path, llvm::raw_ostream &os) {
  std::vector<std::string> positionals;
  for (const CLI::Option *option : command.get_options())
    if (option->get_positional())
      positionals.push_back(option->get_required() ? option->get_name()
                                                   : "[" + option->get_name() + "]");
  os << ".SS \"" << escaped(path) << (positionals.empty() ? "" : " ")
     << escaped(llvm::join(positionals, " ")) << "\"\n"
     << escaped(command.get_description()) << "\n";
  for (const CLI::Option *option : command.get_options()) {
    if (option->get_positional() || option->get_lnames() == std::vector<std::string>{"help"})
      continue;
    os << ".TP\n" << optionNames(*option) << "\n" << escaped(option->get_description()) << "\n";
  }
  for (const CLI::App *child : visibleSubcommands(command))
    writeCommand(*child, path + " " + child->get_name(), os);
}

} // namespace

void writeManPage(const CLI::App &app, llvm::raw_ostream &os) {
  os << ".\\\" kiln(1), written by `kiln man-page` from kiln's command-line definition.\n"
     << ".TH KILN 1 \"\" \"kiln " << escaped(pipeline::versionNumber()) << "\" \"Kiln\"\n"
     << ".SH NAME\n"
     << "kiln \\- " << escaped(app.get_description()) << "\n"
     << ".SH SYNOPSIS\n";
  for (const CLI::App *command : visibleSubcommands(app))
    os << ".B kiln\n[\\fB\\-\\-color\\fR=\\fIauto\\fR|\\fIalways\\fR|\\fInever\\fR] \\fB"
       << escaped(command->get_name()) << "\\fR ...\n.br\n";
  os << ".SH DESCRIPTION\n"
     << "kiln compiles GPU kernels written in Python, in Numba's CUDA dialect, ahead of time: "
        "into PTX, cubins and fat binaries for several GPU architectures, and into Python "
        "extension modules that run them on a GPU or on Kiln's CPU engine.\n"
     << ".SH OPTIONS\n";
  for (const CLI::Option *option : app.get_options())
    if (!option->get_positional())
      os << ".TP\n" << optionNames(*option) << "\n" << escaped(option->get_description()) << "\n";
  os << ".SH COMMANDS\n";
  for (const CLI::App *command : visibleSubcommands(app))
    writeCommand(*command, "kiln " + command->get_name(), os);
  os << ".SH EXIT STATUS\n"
     << escaped(app.get_footer()) << "\n"
     << ".SH ENVIRONMENT\n"
     << ".TP\n.B CUDAARCHS\nThe architectures to build for when \\fB\\-\\-arch\\fR is not given.\n"
     << ".TP\n.B KILN_CACHE_DIR\nThe specialization cache's folder.\n"
     << ".TP\n.B NO_COLOR\\fR, \\fBCLICOLOR_FORCE\nColour with \\fB\\-\\-color=auto\\fR: none, "
        "or always.\n"
     << ".TP\n.B CUDA_HOME\\fR, \\fBCUDA_PATH\nWhere the CUDA toolkit (ptxas, fatbinary, "
        "libdevice) is.\n"
     << ".SH SEE ALSO\n"
     << "The documentation in Kiln's docs/ folder: cli.md, language.md, runtime.md, cache.md.\n";
}

} // namespace kiln::driver
