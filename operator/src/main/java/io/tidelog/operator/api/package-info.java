/**
 * The custom resources, group {@code tidelog.io}, version {@code v1alpha1}: {@link
 * io.tidelog.operator.api.Cluster} and {@link io.tidelog.operator.api.Topic}, their specs and
 * statuses. The CRDs in {@code crds/} are generated from these classes by fabric8's CRD generator,
 * so the OpenAPI validation (required fields, minima, enums, CEL rules) lives here as annotations.
 * Plain data: no client calls.
 */
package io.tidelog.operator.api;
