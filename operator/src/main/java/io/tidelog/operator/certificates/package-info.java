/**
 * X.509 for the clusters the operator runs: certificate authorities, the certificates they issue,
 * and their PEM form, made with Bouncy Castle (no ASN.1 of our own). Depends on nothing else of the
 * operator.
 */
package io.tidelog.operator.certificates;
