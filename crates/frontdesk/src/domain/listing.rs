//! List parameters shared by the collection endpoints: paging (`limit`, `skip`), sorting (`sortField`,
//! `sortDirection`), projection (`fields`) and id selection (`_ids`).

use futures::stream::BoxStream;
use serde::Deserialize;
use utoipa::IntoParams;

use super::{Error, FieldError, Result};
pub use crate::store::Page;

/// Most ids one `_ids` may name.
pub const MAX_IDS: usize = 1000;

#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListParams {
    /// Page size; 0 (the default) answers every match, streamed.
    #[param(minimum = 0)]
    pub limit: Option<i64>,
    /// Matches to skip before the page starts.
    #[param(minimum = 0)]
    pub skip: Option<i64>,
    /// `ASC` (default) or `DESC`, case-insensitive.
    #[param(pattern = "^([Aa][Ss][Cc]|[Dd][Ee][Ss][Cc])$")]
    pub sort_direction: Option<String>,
    /// Comma-separated ids: only these records.
    #[serde(rename = "_ids")]
    #[param(rename = "_ids")]
    pub ids: Option<String>,
}

/// A record kind's list vocabulary: its sortable fields (API name, column) and every field a projection may name.
pub struct Vocabulary {
    pub sortable: &'static [(&'static str, &'static str)],
    pub fields: &'static [&'static str],
}

/// The record-specific list parameters: which field to sort by and which fields to answer. Each record kind
/// declares them in its own filter, so that the OpenAPI document lists its field names.
pub struct Shape<'a> {
    pub sort_field: Option<&'a str>,
    pub fields: Option<&'a str>,
}

impl ListParams {
    pub fn validate(&self, shape: Shape<'_>, vocabulary: &Vocabulary) -> Result<Page> {
        let mut errors = Vec::new();
        let limit = self.limit.unwrap_or(0);
        if limit < 0 {
            errors.push(FieldError::field("limit", "must not be negative"));
        }
        let skip = self.skip.unwrap_or(0);
        if skip < 0 {
            errors.push(FieldError::field("skip", "must not be negative"));
        }
        let sort_field = shape.sort_field.unwrap_or("id");
        let sort_column = vocabulary.sortable.iter().find(|(name, _)| *name == sort_field).map(|(_, col)| *col);
        if sort_column.is_none() {
            let names: Vec<&str> = vocabulary.sortable.iter().map(|(name, _)| *name).collect();
            errors.push(FieldError::field("sortField", format!("must be one of {}", names.join(", "))));
        }
        let descending = match self.sort_direction.as_deref().map(str::to_ascii_uppercase).as_deref() {
            None | Some("ASC") => false,
            Some("DESC") => true,
            Some(_) => {
                errors.push(FieldError::field("sortDirection", "must be ASC or DESC"));
                false
            }
        };
        let projection: Option<Vec<String>> = shape.fields.map(|f| f.split(',').map(str::to_owned).collect());
        if let Some(fields) = &projection {
            let unknown: Vec<&str> =
                fields.iter().map(String::as_str).filter(|f| !vocabulary.fields.contains(f)).collect();
            if !unknown.is_empty() {
                errors.push(FieldError::field("fields", format!("unknown fields: {}", unknown.join(", "))));
            }
        }
        let ids: Option<Vec<String>> = self
            .ids
            .as_deref()
            .map(|ids| ids.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect());
        if ids.as_ref().is_some_and(|ids| ids.len() > MAX_IDS) {
            errors.push(FieldError::field("_ids", format!("at most {MAX_IDS} ids")));
        }
        if !errors.is_empty() {
            return Err(Error::Validation(errors));
        }
        Ok(Page {
            limit: (limit > 0).then_some(limit),
            skip,
            sort_column: sort_column.unwrap_or("id"),
            descending,
            projection,
            ids,
        })
    }
}

/// A list answer: how many records match in all, and the requested records.
pub struct Listing<T> {
    pub total: i64,
    pub items: ListItems<T>,
    pub projection: Option<Vec<String>>,
}

/// The records of a list answer.
pub enum ListItems<T> {
    /// A page, read whole (with its total, in one statement): answered in one piece.
    Page(Vec<T>),
    /// Every match (or a large page), streamed, so that it is never held in memory at once.
    Streamed(BoxStream<'static, Result<T>>),
}

impl<T: Send + 'static> ListItems<T> {
    pub fn into_stream(self) -> BoxStream<'static, Result<T>> {
        use futures::StreamExt;
        match self {
            ListItems::Page(items) => futures::stream::iter(items.into_iter().map(Ok)).boxed(),
            ListItems::Streamed(stream) => stream,
        }
    }
}
