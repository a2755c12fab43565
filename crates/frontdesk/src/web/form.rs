//! Forms: every field arrives as text; this turns it into the domain's input and turns the domain's refusal back
//! into messages beside the fields. Form fields are named like the API's JSON fields (`firstName`,
//! `checkInDate`), so a domain validation error names the field the operator has to fix.

use std::collections::HashMap;

use chrono::NaiveDate;

use crate::domain::validate::calendar_date;
use crate::domain::{money, Error, FieldError};

/// Messages per field, and one for the whole form (a conflict, or a rule about several fields).
#[derive(Debug, Default, Clone)]
pub struct FormErrors {
    fields: HashMap<String, String>,
    pub general: Option<String>,
}

impl FormErrors {
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.general.is_none()
    }

    pub fn add(&mut self, field: &str, message: impl Into<String>) {
        self.fields.entry(field.to_string()).or_insert_with(|| message.into());
    }

    /// The message of `field`, or an empty string (templates print it only when there is one).
    pub fn get(&self, field: &str) -> &str {
        self.fields.get(field).map(String::as_str).unwrap_or("")
    }

    pub fn has(&self, field: &str) -> bool {
        self.fields.contains_key(field)
    }

    /// `aria-invalid` for a field's control.
    pub fn invalid(&self, field: &str) -> &'static str {
        if self.has(field) {
            "true"
        } else {
            "false"
        }
    }

    /// Sorts a domain error: validation errors go beside their fields (`rooms[0].adults` beside `adults`),
    /// conflicts and other refusals to the top of the form. Errors that are not about the input come back.
    pub fn absorb(&mut self, err: Error) -> Result<(), Error> {
        match err {
            Error::Validation(errors) => {
                for FieldError { field, index, message } in errors {
                    match field {
                        Some(field) => {
                            let name = field.rsplit('.').next().unwrap_or(&field).to_string();
                            self.add(&name, message);
                        }
                        None => {
                            let prefix = index.map(|i| format!("entry {i}: ")).unwrap_or_default();
                            self.general.get_or_insert(format!("{prefix}{message}"));
                        }
                    }
                }
                Ok(())
            }
            Error::Conflict(message) | Error::BadRequest(message) => {
                self.general = Some(capitalize(&message));
                Ok(())
            }
            // What stands in the way of the request as things are (an invoice's missing details): every reason, at
            // the top, since they name records rather than the form's fields.
            Error::Unprocessable(errors) => {
                let reasons: Vec<String> = errors.into_iter().map(|e| capitalize(&e.message)).collect();
                self.general = Some(reasons.join(". "));
                Ok(())
            }
            Error::NotFound(what) => {
                self.general = Some(format!("The {what} no longer exists."));
                Ok(())
            }
            other => Err(other),
        }
    }

    /// The same errors with every message rewritten by `f` (wording for another audience).
    pub fn map_messages(self, f: impl Fn(&str) -> String) -> FormErrors {
        FormErrors {
            fields: self.fields.into_iter().map(|(field, message)| (field, f(&message))).collect(),
            general: self.general.map(|message| f(&message)),
        }
    }

    /// Fields with a message that no control of the form shows: listed at the top so none goes unseen.
    pub fn unplaced(&self, shown: &[&str]) -> Vec<String> {
        let mut rest: Vec<String> = self
            .fields
            .iter()
            .filter(|(field, _)| !shown.contains(&field.as_str()))
            .map(|(field, message)| format!("{field}: {message}"))
            .collect();
        rest.sort();
        rest
    }

    /// A date field (`YYYY-MM-DD`, as `<input type=date>` sends it); required or optional.
    pub fn date(&mut self, field: &str, value: &str, required: bool) -> Option<NaiveDate> {
        let value = value.trim();
        if value.is_empty() {
            if required {
                self.add(field, "Choose a date.");
            }
            return None;
        }
        let date = calendar_date(value);
        if date.is_none() {
            self.add(field, "Enter a date as YYYY-MM-DD.");
        }
        date
    }

    /// A whole number within `[min, max]`; empty means `default`.
    pub fn count(&mut self, field: &str, value: &str, default: i64, min: i64, max: i64) -> i64 {
        let value = value.trim();
        if value.is_empty() {
            return default;
        }
        match value.parse::<i64>() {
            Ok(n) if (min..=max).contains(&n) => n,
            _ => {
                self.add(field, format!("Enter a whole number from {min} to {max}."));
                default
            }
        }
    }

    /// An amount typed in major units of `currency`; empty is `None`.
    pub fn money(&mut self, field: &str, value: &str, currency: &str) -> Option<i64> {
        if value.trim().is_empty() {
            return None;
        }
        match money::parse(value, currency) {
            Ok(minor) => Some(minor),
            Err(message) => {
                self.add(field, capitalize(&message) + ".");
                None
            }
        }
    }
}

/// Optional text: blank is `None`.
pub fn optional(value: &str) -> Option<String> {
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_string())
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A destructive action's form says it was confirmed (by the browser's dialog, or the confirmation page).
pub fn confirmed(value: Option<&str>) -> bool {
    value == Some("yes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_errors_land_beside_their_fields() {
        let mut errors = FormErrors::default();
        let refused = Error::Validation(vec![
            FieldError::field("rooms[0].adults", "the party does not fit"),
            FieldError::field("firstName", "must not be empty"),
        ]);
        assert!(errors.absorb(refused).is_ok());
        assert_eq!(errors.get("adults"), "the party does not fit");
        assert_eq!(errors.get("firstName"), "must not be empty");
        assert_eq!(errors.invalid("lastName"), "false");
        assert!(errors.absorb(Error::Conflict("not enough rooms".into())).is_ok());
        assert_eq!(errors.general.as_deref(), Some("Not enough rooms"));
        assert!(errors.absorb(Error::Internal(anyhow::anyhow!("boom"))).is_err());
    }

    #[test]
    fn typed_values() {
        let mut errors = FormErrors::default();
        assert_eq!(errors.count("adults", "", 2, 1, 10), 2);
        assert_eq!(errors.count("adults", "3", 2, 1, 10), 3);
        assert_eq!(errors.count("adults", "0", 2, 1, 10), 2);
        assert!(errors.has("adults"));
        assert_eq!(errors.money("price", "120.50", "EUR"), Some(12050));
        assert_eq!(errors.money("price", "", "EUR"), None);
        assert_eq!(errors.money("total", "1.5", "JPY"), None);
        assert!(errors.has("total"));
        assert_eq!(errors.date("from", "2026-02-30", true), None);
        assert!(errors.has("from"));
    }
}
