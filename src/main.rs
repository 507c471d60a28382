use std::process::ExitCode;

fn main() -> ExitCode {
    sofabench::files::ignore_file_size_signal();
    match sofabench::cli::main(std::env::args_os().collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failed) => failed.report(),
    }
}
