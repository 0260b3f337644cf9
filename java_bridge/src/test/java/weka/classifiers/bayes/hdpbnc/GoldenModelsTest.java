package weka.classifiers.bayes.hdpbnc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;

/**
 * The golden model files that Python wrote (tests/golden/models, see make_golden.py): the Java
 * reader and prediction give Python's probabilities for every row to 1e-9.
 */
class GoldenModelsTest {

  static Stream<String> names() throws IOException {
    return ModelFile.asMap(Json.parse(read(TestFiles.golden().resolve("manifest.json")))).keySet().stream();
  }

  static String read(Path p) throws IOException {
    return new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
  }

  /** The golden data set with its class set, and the model. */
  static Instances data(String name) throws Exception {
    Map<String, Object> entry = ModelFile.asMap(ModelFile.asMap(
      Json.parse(read(TestFiles.golden().resolve("manifest.json")))).get(name));
    Instances data = DataSource.read(TestFiles.repo().resolve((String) entry.get("data")).toString());
    data.setClass(data.attribute((String) entry.get("class")));
    return data;
  }

  @ParameterizedTest
  @MethodSource("names")
  void probabilitiesMatchPython(String name) throws Exception {
    HDPModel model = ModelFile.read(TestFiles.golden().resolve(name + ".hdpbnc"));
    Instances data = data(name);
    InstanceCoder coder = new InstanceCoder(model, data);
    List<String> lines = Files.readAllLines(TestFiles.golden().resolve(name + ".proba.csv"));
    String[] head = lines.get(0).split(",");
    assertEquals(model.numClasses() + 1, head.length);
    for (int y = 0; y < model.numClasses(); y++) {
      assertEquals("p_" + model.classValues()[y], head[y + 1]);
    }
    assertEquals(data.numInstances(), lines.size() - 1);
    double worst = 0;
    for (int i = 0; i < data.numInstances(); i++) {
      String[] f = lines.get(i + 1).split(",");
      double[] expected = new double[model.numClasses()];
      for (int y = 0; y < expected.length; y++) {
        expected[y] = Double.parseDouble(f[y + 1]);
      }
      double[] got = coder.distribution(data.instance(i));
      assertArrayEquals(expected, got, 1e-9, name + " row " + i);
      for (int y = 0; y < expected.length; y++) {
        worst = Math.max(worst, Math.abs(expected[y] - got[y]));
      }
    }
    assertTrue(worst < 1e-12, name + ": largest difference " + worst);
  }
}
