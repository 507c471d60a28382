//! Finding the template a command names, or the built-in one.

use std::path::Path;

use crate::exit::Failed;
use crate::template::Template;

/// Iron Cushion's example schema, used when a run names no template.
const BUILT_IN: &str = include_str!("../../examples/ironcushion.json");

/// Loads the JSON or XML template a command names, or the built-in example when it
/// names none. Returns the template and how to describe it.
pub fn load(json: Option<&Path>, xml: Option<&Path>) -> Result<(Template, String), Failed> {
    let loaded = match (json, xml) {
        (Some(path), _) => Template::load_json(path).map(|t| (t, path.display().to_string())),
        (None, Some(path)) => Template::load_xml(path).map(|t| (t, path.display().to_string())),
        (None, None) => Template::from_json_str(BUILT_IN, "built-in ironcushion.json").map(|t| {
            (
                t,
                "built-in Iron Cushion example (give --json_document_schema_filename for your own)"
                    .to_string(),
            )
        }),
    };
    loaded.map_err(|e| Failed::bad_input(e.to_string()))
}

/// As [`load`], with the scenario's own template (JSON text, description) in place of
/// the built-in example when the command names none.
pub fn load_or(
    json: Option<&Path>,
    xml: Option<&Path>,
    own: Option<&crate::scenario::OwnTemplate>,
) -> Result<(Template, String), Failed> {
    match (json, xml, own) {
        (None, None, Some((text, name))) => Template::from_json_str(text, name)
            .map(|t| (t, name.clone()))
            .map_err(|e| Failed::bad_input(e.to_string())),
        _ => load(json, xml),
    }
}

/// Loads a template by its file name: XML when it ends in `.xml`, JSON otherwise.
pub fn load_by_extension(path: &Path) -> Result<Template, Failed> {
    let is_xml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("xml"));
    let loaded = if is_xml {
        Template::load_xml(path)
    } else {
        Template::load_json(path)
    };
    loaded.map_err(|e| Failed::bad_input(e.to_string()))
}
