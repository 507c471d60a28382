//! TEMPORARY STUB until the template module lands.
use std::path::Path;
#[derive(Debug, Clone)]
pub struct Template;
#[derive(Debug)]
pub struct TemplateError(String);
impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl Template {
    pub fn load_json(_p: &Path) -> Result<Template, TemplateError> {
        Ok(Template)
    }
    pub fn load_xml(_p: &Path) -> Result<Template, TemplateError> {
        Ok(Template)
    }
    pub fn from_json_str(_t: &str, _s: &str) -> Result<Template, TemplateError> {
        Ok(Template)
    }
}
pub struct DocumentWriter;
impl DocumentWriter {
    pub fn new(_t: Template, _s: u64) -> Self {
        DocumentWriter
    }
    pub fn write(
        &self,
        out: &mut Vec<u8>,
        number: u64,
        version: u32,
        id: Option<&str>,
        rev: Option<&str>,
    ) {
        out.push(b'{');
        if let Some(id) = id {
            out.extend_from_slice(format!("\"_id\":\"{id}\",").as_bytes());
        }
        if let Some(rev) = rev {
            out.extend_from_slice(format!("\"_rev\":\"{rev}\",").as_bytes());
        }
        out.extend_from_slice(format!("\"n\":{number},\"v\":{version}}}").as_bytes());
    }
}
