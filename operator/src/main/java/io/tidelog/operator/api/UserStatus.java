package io.tidelog.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/** What the operator last saw of a {@link User}. */
public class UserStatus {
  @JsonPropertyDescription("Ready, with a reason when it is not.")
  public List<Condition> conditions = new ArrayList<>();

  @JsonPropertyDescription("The metadata.generation that the status describes.")
  public Long observedGeneration;

  @JsonPropertyDescription("The Kafka user's name, its principal User:<username>.")
  public String username;

  @JsonPropertyDescription("The Secret that holds the user's credential.")
  public String secret;

  @JsonPropertyDescription(
      "The password Secret's uid and resourceVersion when its password became the credential.")
  public String credentialSource;
}
