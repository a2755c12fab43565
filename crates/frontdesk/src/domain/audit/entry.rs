//! What an audit entry says about a record: the fields that changed, with their values before and after, less what
//! the log must not keep; and, for records written many at a time (the nights of a rate plan), one summary per change
//! instead of one entry per record. Pure: [`super::super::change::Change`] collects these as it goes and writes them
//! when it commits.

use std::collections::BTreeSet;

use chrono::NaiveDate;
use serde_json::{Map, Value};

use crate::model::audit::{BulkSummary, FieldChange};
use crate::model::changes::{Action, RecordKind};

/// Fields no entry lists: when a record changed is the entry's own time.
const UNLISTED: [&str; 2] = ["createdAt", "updatedAt"];

/// One record written by a change, before the change knows who it is and when it commits.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    pub organization_id: String,
    pub hotel_id: Option<String>,
    pub kind: RecordKind,
    pub record_id: String,
    pub action: Action,
    pub fields: Vec<FieldChange>,
}

/// The fields `action` changed, from the record as it was (`before`) and as it is (`after`), each as its JSON, in
/// the order of their names. Nested objects are compared field by field (`folio.balance`); a list is one value.
/// Fields named in `private` (top level) are listed as changed with no value. A created record lists what it was
/// created with, a deleted one what it had; neither lists empty fields.
pub fn fields(action: Action, before: Option<&Value>, after: Option<&Value>, private: &[&str]) -> Vec<FieldChange> {
    let mut out = Vec::new();
    let (before, after) = match action {
        Action::Created => (None, after),
        Action::Updated => (before, after),
        Action::Deleted => (before, None),
    };
    compare("", before, after, private, &mut out);
    out
}

fn compare(prefix: &str, before: Option<&Value>, after: Option<&Value>, private: &[&str], out: &mut Vec<FieldChange>) {
    let empty = Map::new();
    let before_fields = before.and_then(Value::as_object).unwrap_or(&empty);
    let after_fields = after.and_then(Value::as_object).unwrap_or(&empty);
    let names = after_fields.keys().chain(before_fields.keys().filter(|k| !after_fields.contains_key(*k)));
    for name in names {
        if prefix.is_empty() && UNLISTED.contains(&name.as_str()) {
            continue;
        }
        let was = before_fields.get(name).filter(|v| !v.is_null());
        let is = after_fields.get(name).filter(|v| !v.is_null());
        if was == is {
            continue;
        }
        let field = format!("{prefix}{name}");
        if prefix.is_empty() && private.contains(&name.as_str()) {
            out.push(FieldChange { field, before: None, after: None, redacted: true });
            continue;
        }
        let nested = |v: Option<&Value>| v.is_none_or(Value::is_object);
        if nested(was) && nested(is) {
            compare(&format!("{field}."), was, is, &[], out);
        } else if records(was) && records(is) {
            compare_records(&field, was, is, out);
        } else {
            out.push(FieldChange { field, before: was.cloned(), after: is.cloned(), redacted: false });
        }
    }
}

/// Whether `value` is absent or a list of records, each an object with an `id` (a reservation's rooms).
fn records(value: Option<&Value>) -> bool {
    value.is_none_or(|v| {
        v.as_array().is_some_and(|items| items.iter().all(|i| i.get("id").is_some_and(Value::is_string)))
    })
}

/// Compares two lists of records by id: `rooms[0].roomId` for the first room (its place in the list now, or in
/// the list before when it was removed).
fn compare_records(field: &str, before: Option<&Value>, after: Option<&Value>, out: &mut Vec<FieldChange>) {
    let empty = Vec::new();
    let before = before.and_then(Value::as_array).unwrap_or(&empty);
    let after = after.and_then(Value::as_array).unwrap_or(&empty);
    let id = |v: &Value| v.get("id").and_then(Value::as_str).map(str::to_owned);
    for (at, item) in after.iter().enumerate() {
        let was = before.iter().find(|b| id(b) == id(item));
        compare(&format!("{field}[{at}]."), was, Some(item), &[], out);
    }
    for (at, item) in before.iter().enumerate() {
        if !after.iter().any(|a| id(a) == id(item)) {
            compare(&format!("{field}[{at}]."), Some(item), None, &[], out);
        }
    }
}

/// The records of one kind and hotel a change wrote many at a time, summarised.
#[derive(Debug, Clone, PartialEq)]
pub struct Bulk {
    pub organization_id: String,
    pub hotel_id: Option<String>,
    pub kind: RecordKind,
    pub count: u64,
    pub created: u64,
    pub parents: BTreeSet<String>,
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    pub fields: BTreeSet<String>,
}

impl Bulk {
    pub fn new(organization_id: &str, hotel_id: Option<&str>, kind: RecordKind) -> Bulk {
        Bulk {
            organization_id: organization_id.to_string(),
            hotel_id: hotel_id.map(str::to_owned),
            kind,
            count: 0,
            created: 0,
            parents: BTreeSet::new(),
            from: None,
            to: None,
            fields: BTreeSet::new(),
        }
    }

    /// Counts one record of `parent` on `date`, written by `action` with `fields` changed.
    pub fn add(&mut self, parent: &str, date: NaiveDate, action: Action, fields: &[FieldChange]) {
        let names = fields.iter().map(|field| field.field.split('.').next().unwrap_or(&field.field));
        self.add_names(parent, date, action, names);
    }

    /// Counts one record of `parent` on `date`, written by `action` with the top-level fields `names` changed.
    pub fn add_names<'a>(
        &mut self,
        parent: &str,
        date: NaiveDate,
        action: Action,
        names: impl IntoIterator<Item = &'a str>,
    ) {
        self.count += 1;
        if action == Action::Created {
            self.created += 1;
        }
        if !self.parents.contains(parent) {
            self.parents.insert(parent.to_string());
        }
        self.from = Some(self.from.map_or(date, |d| d.min(date)));
        self.to = Some(self.to.map_or(date, |d| d.max(date)));
        // A nested field of a summarised record counts as its top-level field.
        for top in names {
            if !self.fields.contains(top) {
                self.fields.insert(top.to_string());
            }
        }
    }

    /// The entry's record id (the first parent's) and its summary.
    pub fn summary(&self) -> (String, BulkSummary) {
        let record_id = self.parents.iter().next().cloned().unwrap_or_default();
        let summary = BulkSummary {
            count: self.count,
            created: self.created,
            parents: self.parents.iter().cloned().collect(),
            date_from: self.from,
            date_to: self.to,
            fields: self.fields.iter().cloned().collect(),
        };
        (record_id, summary)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn names(fields: &[FieldChange]) -> Vec<&str> {
        fields.iter().map(|f| f.field.as_str()).collect()
    }

    #[test]
    fn an_update_lists_only_what_changed_with_both_values() {
        let before = json!({"id": "r1", "status": "CONFIRMED", "adults": 2, "updatedAt": "a", "notes": null});
        let after = json!({"id": "r1", "status": "CHECKED_IN", "adults": 2, "updatedAt": "b", "notes": "late"});
        let fields = fields(Action::Updated, Some(&before), Some(&after), &[]);
        assert_eq!(names(&fields), ["notes", "status"]);
        assert_eq!(fields[1].before, Some(json!("CONFIRMED")));
        assert_eq!(fields[1].after, Some(json!("CHECKED_IN")));
        assert_eq!(fields[0].before, None, "null is no value");
    }

    #[test]
    fn nested_objects_are_dotted_and_lists_are_one_value() {
        let before = json!({"folio": {"id": "f", "balance": 100}, "rooms": [1]});
        let after = json!({"folio": {"id": "f", "balance": 0}, "rooms": [1, 2]});
        let fields = fields(Action::Updated, Some(&before), Some(&after), &[]);
        assert_eq!(names(&fields), ["folio.balance", "rooms"]);
        assert_eq!(fields[1].after, Some(json!([1, 2])));
    }

    #[test]
    fn lists_of_records_are_compared_by_id() {
        let before = json!({"rooms": [{"id": "a", "roomId": "101", "adults": 2}, {"id": "b", "roomId": "102"}]});
        let after = json!({"rooms": [{"id": "a", "roomId": "103", "adults": 2}, {"id": "c", "roomId": "104"}]});
        let fields = fields(Action::Updated, Some(&before), Some(&after), &[]);
        assert_eq!(
            names(&fields),
            ["rooms[0].roomId", "rooms[1].id", "rooms[1].roomId", "rooms[1].id", "rooms[1].roomId"]
        );
        assert_eq!((fields[0].before.clone(), fields[0].after.clone()), (Some(json!("101")), Some(json!("103"))));
        assert_eq!(fields[3].before, Some(json!("b")), "the removed room, as it was");
        assert!(fields[3].after.is_none());
    }

    #[test]
    fn private_fields_are_listed_as_changed_without_values() {
        let before = json!({"firstName": "Ada", "email": "ada@example.com", "phone": "1"});
        let after = json!({"firstName": "Ada", "email": "ada@example.org", "phone": "1"});
        let fields = fields(Action::Updated, Some(&before), Some(&after), &["email", "phone"]);
        assert_eq!(fields, [FieldChange { field: "email".into(), before: None, after: None, redacted: true }]);
        let created = super::fields(Action::Created, None, Some(&after), &["email", "phone"]);
        assert_eq!(names(&created), ["email", "firstName", "phone"]);
        assert!(created[0].redacted && created[0].after.is_none());
        assert!(!serde_json::to_string(&created).unwrap().contains("example"), "no contact value in the entry");
    }

    #[test]
    fn created_and_deleted_records_list_what_they_hold() {
        let record = json!({"id": "g", "name": "Suite", "capacity": 2, "description": null, "createdAt": "x"});
        let created = fields(Action::Created, None, Some(&record), &[]);
        assert_eq!(names(&created), ["capacity", "id", "name"]);
        assert!(created.iter().all(|f| f.before.is_none() && f.after.is_some()));
        let deleted = fields(Action::Deleted, Some(&record), None, &[]);
        assert_eq!(names(&deleted), ["capacity", "id", "name"]);
        assert!(deleted.iter().all(|f| f.before.is_some() && f.after.is_none()));
    }

    #[test]
    fn a_bulk_change_sums_up_plans_dates_and_fields() {
        let mut bulk = Bulk::new("org", Some("hotel"), RecordKind::DailyRate);
        let day = |d: u32| NaiveDate::from_ymd_opt(2027, 1, d).unwrap();
        let price = [FieldChange { field: "price".into(), before: None, after: Some(json!(1)), redacted: false }];
        let stop = [FieldChange { field: "stopSell".into(), before: None, after: Some(json!(true)), redacted: false }];
        bulk.add("plan-b", day(5), Action::Updated, &price);
        bulk.add("plan-a", day(2), Action::Created, &stop);
        bulk.add("plan-b", day(9), Action::Updated, &price);
        let (record_id, summary) = bulk.summary();
        assert_eq!(record_id, "plan-a");
        assert_eq!(summary.count, 3);
        assert_eq!(summary.created, 1);
        assert_eq!(summary.parents, ["plan-a", "plan-b"]);
        assert_eq!((summary.date_from, summary.date_to), (Some(day(2)), Some(day(9))));
        assert_eq!(summary.fields, ["price", "stopSell"]);
    }
}
