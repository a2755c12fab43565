//! The fixed choices of the guest form: countries and arrival times.

use std::sync::LazyLock;

/// ISO 3166-1 alpha-2 codes with the names people use (`countries.tsv`, taken from the ISO 3166 data of the Python
/// package pycountry 26.2.16: its `common_name` where it has one, else `name`), sorted by name.
static COUNTRIES: LazyLock<Vec<(&'static str, &'static str)>> =
    LazyLock::new(|| include_str!("countries.tsv").lines().filter_map(|line| line.split_once('\t')).collect());

/// An option of a `<select>`.
#[derive(Debug, Clone)]
pub struct Choice {
    pub value: String,
    pub label: String,
    pub selected: bool,
}

/// Every country, `selected` chosen, after a blank "choose" option.
pub fn countries(selected: &str) -> Vec<Choice> {
    let mut options = vec![Choice { value: String::new(), label: "Choose a country".into(), selected: false }];
    options.extend(COUNTRIES.iter().map(|(code, name)| Choice {
        value: code.to_string(),
        label: name.to_string(),
        selected: *code == selected,
    }));
    options
}

/// The name of a country code.
pub fn country_name(code: &str) -> Option<&'static str> {
    COUNTRIES.iter().find(|(c, _)| *c == code).map(|(_, name)| *name)
}

pub fn is_country(code: &str) -> bool {
    COUNTRIES.iter().any(|(c, _)| *c == code)
}

/// Arrival times every half hour from 06:00 to 23:30 (local time at the hotel), after "not sure yet".
pub fn arrival_times(selected: &str) -> Vec<Choice> {
    let mut options =
        vec![Choice { value: String::new(), label: "Not sure yet".into(), selected: selected.is_empty() }];
    for half_hours in 12..48 {
        let value = format!("{:02}:{:02}", half_hours / 2, (half_hours % 2) * 30);
        options.push(Choice { selected: value == selected, label: value.clone(), value });
    }
    options
}

pub fn is_arrival_time(value: &str) -> bool {
    arrival_times(value).iter().skip(1).any(|c| c.selected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_country_once_with_a_two_letter_code() {
        assert_eq!(COUNTRIES.len(), 249);
        assert!(COUNTRIES
            .iter()
            .all(|(code, name)| code.len() == 2 && code.chars().all(|c| c.is_ascii_uppercase()) && !name.is_empty()));
        let mut codes: Vec<_> = COUNTRIES.iter().map(|(c, _)| *c).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), 249);
        assert!(is_country("PT") && is_country("GB") && !is_country("XX"));
        assert!(countries("PT").iter().any(|c| c.selected && c.label == "Portugal"));
    }

    #[test]
    fn arrival_times_are_half_hours_of_the_day() {
        let times = arrival_times("");
        assert_eq!(times.len(), 37);
        assert_eq!(times[1].value, "06:00");
        assert_eq!(times[36].value, "23:30");
        assert!(is_arrival_time("18:30") && !is_arrival_time("18:15") && !is_arrival_time(""));
    }
}
