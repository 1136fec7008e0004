// The analysis library; see analysis/report.h once it lands.
