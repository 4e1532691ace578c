// The `rewind` subcommands. Each registers its options on the CLI11 app and returns a
// function that runs it and yields the process exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace rwd::cli {

/// A registered subcommand: run() is called when the user chose it.
using Runner = std::function<int()>;

Runner add_record(CLI::App& app);
Runner add_replay(CLI::App& app);
Runner add_ls(CLI::App& app);
Runner add_ps(CLI::App& app);
Runner add_dump(CLI::App& app);
Runner add_rm(CLI::App& app);
Runner add_dap(CLI::App& app);
Runner add_machine(CLI::App& app);

/// `rewind record [OPTIONS] [--] PROGRAM [ARGS...]`: everything from the program on belongs to
/// the program, even arguments that look like rewind's options. Splits argv there: returns the
/// number of leading arguments for CLI11 to parse and stores the program's command line for
/// the record runner. Other subcommands are left whole.
int split_program_command(int argc, char** argv);

/// Exit code for usage errors (unknown option, missing program), as documented in --help.
constexpr int kUsageError = 2;
/// Exit code when rewind itself fails (bad trace, divergence, unsupported syscall).
constexpr int kRewindError = 1;

}  // namespace rwd::cli
