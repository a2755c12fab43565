//! Money a hotel charges and takes: its tax and billing settings ([`billing`]), the VAT of a line and the one
//! rounding rule ([`tax`]), and the city tax of a stay ([`city_tax`]). docs/money.md states the rules.

pub mod billing;
pub mod city_tax;
pub mod tax;
