//! Money a hotel charges and takes: its tax and billing settings ([`billing`]), the VAT of a line and the one rounding
//! rule ([`tax`]), the city tax of a stay ([`city_tax`]) and a stay exempt from it ([`city_tax_exemption`]), how a
//! folio line is made ([`lines`]), the lines a stay makes on its folio ([`folios`]) and what people record on it
//! ([`ledger`]), the close of each business day ([`end_of_day`]) and the revenue report ([`revenue`]), and the invoices
//! a folio is closed into ([`invoices`]). docs/money.md states the rules.

pub mod billing;
pub mod city_tax;
pub mod city_tax_exemption;
pub mod end_of_day;
pub mod folios;
pub mod invoices;
pub mod ledger;
pub mod lines;
pub mod revenue;
pub mod tax;
