package io.tidelog.e2e;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.AccessMode;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Network;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import com.github.dockerjava.api.model.Volume;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.KeyToPath;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.Base64;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Plays the kubelet for pods of the mock API's workloads, each in a Docker container of the tests'
 * daemon: the pod template's command, arguments and environment, with Kubernetes' {@code $(VAR)}
 * expansion and {@code fieldRef}s; its Secret, ConfigMap, downward-API and scratch volumes as files
 * written from the API and bind-mounted where the template mounts them, owned as {@code fsGroup}
 * says, and its volume claims as directories; its security context (user and group, a read-only
 * root, no capabilities, no privilege escalation); and the DNS names Kubernetes would give it, as
 * network aliases: {@code <pod>.<subdomain>.<namespace>.svc}, and {@code <service>.<namespace>.svc}
 * of every Service that selects it.
 */
public final class DockerKubelet implements AutoCloseable {
  private static final Pattern REFERENCE = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");
  private static final int LOG_TAIL_LINES = 60;

  private final DockerClient docker;
  private final KubernetesClient kubernetes;
  private final String namespace;
  private final String network;
  private final Path dir;
  private final Map<String, String> containers = new LinkedHashMap<>();

  /**
   * Runs pods of {@code namespace} on a Docker network of its own, {@code network}, on {@code
   * subnet}; their files live under {@code dir}.
   */
  public DockerKubelet(
      DockerClient docker,
      KubernetesClient kubernetes,
      String namespace,
      String network,
      String subnet,
      Path dir) {
    this.docker = docker;
    this.kubernetes = kubernetes;
    this.namespace = namespace;
    this.network = network;
    this.dir = dir;
    docker
        .createNetworkCmd()
        .withName(network)
        .withIpam(new Network.Ipam().withConfig(new Network.Ipam.Config().withSubnet(subnet)))
        .exec();
  }

  /**
   * What runs a pod besides its template: the image in place of the template's (which no registry
   * here serves), host ports ({@code "127.0.1.10:9092" -> 9092}), environment the pod would get
   * from its cluster (say, where the API server is), and whether it shares the host's network, as a
   * pod with {@code hostNetwork} does.
   */
  public record Placement(
      String image, Map<String, Integer> published, Map<String, String> env, boolean hostNetwork) {}

  /**
   * Starts pod {@code pod} of {@code template} (its first container) as a container named {@code
   * pod}, in subdomain {@code subdomain} (a StatefulSet's {@code serviceName}, or null).
   */
  public void run(PodTemplateSpec template, String pod, String subdomain, Placement placement)
      throws IOException {
    Container container = template.getSpec().getContainers().get(0);
    Map<String, String> env = environment(container, pod);
    env.putAll(placement.env());
    List<String> command = new ArrayList<>();
    if (container.getCommand() != null) {
      container.getCommand().forEach(arg -> command.add(expand(arg, env)));
    }
    List<String> args = new ArrayList<>();
    if (container.getArgs() != null) {
      container.getArgs().forEach(arg -> args.add(expand(arg, env)));
    }
    PodSecurityContext podSecurity = template.getSpec().getSecurityContext();
    SecurityContext security = container.getSecurityContext();
    Long fsGroup = podSecurity == null ? null : podSecurity.getFsGroup();
    List<Bind> binds = new ArrayList<>();
    for (VolumeMount mount : container.getVolumeMounts()) {
      Path source = volume(template, pod, mount.getName(), fsGroup);
      binds.add(
          new Bind(
              source.toString(),
              new Volume(mount.getMountPath()),
              Boolean.TRUE.equals(mount.getReadOnly()) ? AccessMode.ro : AccessMode.rw));
    }
    List<PortBinding> ports = new ArrayList<>();
    List<ExposedPort> exposed = new ArrayList<>();
    placement
        .published()
        .forEach(
            (host, port) -> {
              String[] ipAndPort = host.split(":");
              exposed.add(ExposedPort.tcp(port));
              ports.add(
                  new PortBinding(
                      Ports.Binding.bindIpAndPort(ipAndPort[0], Integer.parseInt(ipAndPort[1])),
                      ExposedPort.tcp(port)));
            });
    HostConfig host =
        HostConfig.newHostConfig()
            .withNetworkMode(placement.hostNetwork() ? "host" : network)
            .withBinds(binds)
            .withPortBindings(ports);
    if (security != null && Boolean.TRUE.equals(security.getReadOnlyRootFilesystem())) {
      host.withReadonlyRootfs(true);
    }
    if (security != null
        && security.getCapabilities() != null
        && security.getCapabilities().getDrop() != null
        && security.getCapabilities().getDrop().contains("ALL")) {
      host.withCapDrop(Capability.ALL);
    }
    if (security != null && Boolean.FALSE.equals(security.getAllowPrivilegeEscalation())) {
      host.withSecurityOpts(List.of("no-new-privileges"));
    }
    var create =
        docker
            .createContainerCmd(placement.image())
            .withName(pod)
            .withHostName(pod)
            .withLabels(Map.of("io.tidelog.e2e.network", network))
            .withEnv(env.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList())
            .withExposedPorts(exposed)
            .withHostConfig(host);
    if (!command.isEmpty()) {
      create.withEntrypoint(command);
    }
    if (!args.isEmpty() || !command.isEmpty()) {
      create.withCmd(args);
    }
    if (podSecurity != null && podSecurity.getRunAsUser() != null) {
      create.withUser(
          podSecurity.getRunAsUser()
              + (podSecurity.getRunAsGroup() == null ? "" : ":" + podSecurity.getRunAsGroup()));
    }
    if (!placement.hostNetwork()) {
      create.withAliases(aliases(template, pod, subdomain));
    }
    String id = create.exec().getId();
    containers.put(pod, id);
    docker.startContainerCmd(id).exec();
  }

  /** Kills pod {@code pod}'s container with SIGKILL, as a node's crash would. */
  public void kill(String pod) {
    docker.killContainerCmd(containers.get(pod)).exec();
  }

  /** Starts pod {@code pod}'s container again, with its files and data as they are. */
  public void start(String pod) {
    docker.startContainerCmd(containers.get(pod)).exec();
  }

  /** Whether pod {@code pod}'s container runs. */
  public boolean running(String pod) {
    return Boolean.TRUE.equals(
        docker.inspectContainerCmd(containers.get(pod)).exec().getState().getRunning());
  }

  /** Runs {@code command} in pod {@code pod}'s container; returns its output, stdout and stderr. */
  public String exec(String pod, String... command) throws InterruptedException {
    String exec =
        docker
            .execCreateCmd(containers.get(pod))
            .withCmd(command)
            .withAttachStdout(true)
            .withAttachStderr(true)
            .exec()
            .getId();
    StringBuilder output = new StringBuilder();
    docker.execStartCmd(exec).exec(into(output)).awaitCompletion(60, TimeUnit.SECONDS);
    return output.toString();
  }

  /** The last lines pod {@code pod}'s container wrote. */
  public String logs(String pod) throws InterruptedException {
    StringBuilder output = new StringBuilder();
    docker
        .logContainerCmd(containers.get(pod))
        .withStdOut(true)
        .withStdErr(true)
        .withTail(LOG_TAIL_LINES)
        .exec(into(output))
        .awaitCompletion(30, TimeUnit.SECONDS);
    return output.toString();
  }

  /** A callback that appends what a container writes to {@code output}. */
  private static ResultCallback.Adapter<Frame> into(StringBuilder output) {
    return new ResultCallback.Adapter<>() {
      @Override
      public void onNext(Frame frame) {
        output.append(new String(frame.getPayload(), StandardCharsets.UTF_8));
      }
    };
  }

  /** Removes the containers and the network. */
  @Override
  public void close() {
    for (String id : containers.values()) {
      try {
        docker.removeContainerCmd(id).withForce(true).withRemoveVolumes(true).exec();
      } catch (RuntimeException e) {
        // gone already
      }
    }
    docker.removeNetworkCmd(network).exec();
  }

  /** The container's environment as the kubelet makes it, in order, each $(VAR) expanded. */
  private Map<String, String> environment(Container container, String pod) {
    Map<String, String> env = new LinkedHashMap<>();
    for (EnvVar var : container.getEnv()) {
      String value;
      if (var.getValueFrom() == null) {
        value = expand(var.getValue() == null ? "" : var.getValue(), env);
      } else if (var.getValueFrom().getFieldRef() != null) {
        String field = var.getValueFrom().getFieldRef().getFieldPath();
        value =
            switch (field) {
              case "metadata.name" -> pod;
              case "metadata.namespace" -> namespace;
              default -> throw new IllegalArgumentException("fieldRef " + field + " is not played");
            };
      } else if (var.getValueFrom().getSecretKeyRef() != null) {
        var ref = var.getValueFrom().getSecretKeyRef();
        value = new String(secretData(ref.getName()).get(ref.getKey()), StandardCharsets.UTF_8);
      } else if (var.getValueFrom().getConfigMapKeyRef() != null) {
        var ref = var.getValueFrom().getConfigMapKeyRef();
        value = configMap(ref.getName()).getData().get(ref.getKey());
      } else {
        throw new IllegalArgumentException("env " + var.getName() + " is not played");
      }
      env.put(var.getName(), value);
    }
    return env;
  }

  /** {@code text} with each {@code $(VAR)} of a defined variable replaced, as Kubernetes does. */
  private static String expand(String text, Map<String, String> env) {
    Matcher m = REFERENCE.matcher(text);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String value = env.get(m.group(1));
      m.appendReplacement(out, Matcher.quoteReplacement(value == null ? m.group() : value));
    }
    m.appendTail(out);
    return out.toString();
  }

  /** The host directory of volume {@code name} of {@code pod}, its files written. */
  private Path volume(PodTemplateSpec template, String pod, String name, Long fsGroup)
      throws IOException {
    Path path = Files.createDirectories(dir.resolve(pod).resolve(name));
    var source =
        template.getSpec().getVolumes().stream()
            .filter(v -> v.getName().equals(name))
            .findFirst()
            .orElse(null);
    if (source == null || source.getEmptyDir() != null) {
      // a volume claim of the StatefulSet, or scratch space: a directory the pod may write
      own(path, fsGroup, "rwxrwx---");
      return path;
    }
    Map<String, byte[]> found = new LinkedHashMap<>();
    List<KeyToPath> items = null;
    Integer mode = null;
    if (source.getSecret() != null) {
      found.putAll(secretData(source.getSecret().getSecretName()));
      items = source.getSecret().getItems();
      mode = source.getSecret().getDefaultMode();
    } else if (source.getConfigMap() != null) {
      configMap(source.getConfigMap().getName())
          .getData()
          .forEach((k, v) -> found.put(k, v.getBytes(StandardCharsets.UTF_8)));
      items = source.getConfigMap().getItems();
      mode = source.getConfigMap().getDefaultMode();
    } else if (source.getDownwardAPI() != null) {
      for (var item : source.getDownwardAPI().getItems()) {
        String field = item.getFieldRef().getFieldPath();
        Map<String, String> values =
            field.equals("metadata.annotations")
                ? template.getMetadata().getAnnotations()
                : template.getMetadata().getLabels();
        StringBuilder text = new StringBuilder();
        values.forEach((k, v) -> text.append(k).append("=\"").append(v).append("\"\n"));
        found.put(item.getPath(), text.toString().getBytes(StandardCharsets.UTF_8));
      }
    } else {
      throw new IllegalArgumentException("volume " + name + " is of a kind not played");
    }
    Map<String, byte[]> files = found;
    if (items != null && !items.isEmpty()) {
      files = new LinkedHashMap<>();
      for (KeyToPath item : items) {
        files.put(item.getPath(), found.get(item.getKey()));
      }
    }
    for (Map.Entry<String, byte[]> file : files.entrySet()) {
      Path target = path.resolve(file.getKey());
      Files.write(target, file.getValue());
      own(target, fsGroup, mode == null ? "rw-r--r--" : permissions(mode));
    }
    own(path, fsGroup, "rwxr-x---");
    return path;
  }

  /** Gives {@code path} to group {@code fsGroup} (as the kubelet does) with {@code permissions}. */
  private static void own(Path path, Long fsGroup, String permissions) throws IOException {
    Files.setPosixFilePermissions(
        path, java.nio.file.attribute.PosixFilePermissions.fromString(permissions));
    if (fsGroup != null) {
      Files.setAttribute(path, "unix:gid", fsGroup.intValue());
    }
  }

  private static String permissions(int mode) {
    Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
    PosixFilePermission[] bits =
        PosixFilePermission.values(); // OWNER_READ first, OTHERS_EXECUTE last
    for (int i = 0; i < 9; i++) {
      if ((mode & (1 << (8 - i))) != 0) {
        set.add(bits[i]);
      }
    }
    return java.nio.file.attribute.PosixFilePermissions.toString(set);
  }

  private Map<String, byte[]> secretData(String name) {
    Secret secret = kubernetes.secrets().inNamespace(namespace).withName(name).get();
    if (secret == null) {
      throw new IllegalStateException("Secret " + name + " does not exist yet");
    }
    Map<String, byte[]> data = new LinkedHashMap<>();
    if (secret.getData() != null) {
      secret.getData().forEach((k, v) -> data.put(k, Base64.getDecoder().decode(v)));
    }
    if (secret.getStringData() != null) {
      secret.getStringData().forEach((k, v) -> data.put(k, v.getBytes(StandardCharsets.UTF_8)));
    }
    return data;
  }

  private ConfigMap configMap(String name) {
    ConfigMap map = kubernetes.configMaps().inNamespace(namespace).withName(name).get();
    if (map == null) {
      throw new IllegalStateException("ConfigMap " + name + " does not exist yet");
    }
    return map;
  }

  /** The DNS names of the pod: its own in its subdomain, and each Service's that selects it. */
  private String[] aliases(PodTemplateSpec template, String pod, String subdomain) {
    List<String> names = new ArrayList<>();
    if (subdomain != null) {
      names.add(pod + "." + subdomain + "." + namespace + ".svc");
    }
    Map<String, String> labels = template.getMetadata().getLabels();
    for (Service service : kubernetes.services().inNamespace(namespace).list().getItems()) {
      Map<String, String> selector = service.getSpec().getSelector();
      if (selector != null
          && !selector.isEmpty()
          && labels.entrySet().containsAll(selector.entrySet())) {
        names.add(service.getMetadata().getName() + "." + namespace + ".svc");
      }
    }
    return names.toArray(String[]::new);
  }
}
