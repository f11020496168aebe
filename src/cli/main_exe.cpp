// The memcert executable: the command line of main.cpp, with the process-wide budget machinery.
#include "command.hpp"

int main(int argc, char** argv) { return memcert::cli::run_command_line(argc, argv); }
