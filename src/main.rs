use std::process::ExitCode;

fn main() -> ExitCode {
    match sofabench::cli::main(std::env::args_os().collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failed) => failed.report(),
    }
}
